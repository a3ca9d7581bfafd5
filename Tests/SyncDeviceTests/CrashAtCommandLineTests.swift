import Foundation
import LabKit
import LabTestSupport
import Testing

@testable import SyncDevice

/// `--crash-at` on a device and on a pool: which device each item arms, and the mistakes refused.
@Suite struct CrashAtCommandLineTests {
    static let base = ["--id", "p1", "--account", "acme", "--token", "t", "--platform", "android",
                       "--db", "/tmp/x.sqlite", "--server", "tcp://127.0.0.1:1"]

    @Test func aDeviceTakesItsOwnItemsAndThoseForEveryDevice() throws {
        let options = try DeviceCommandLine.spec.parse(Self.base + [
            "--crash-at", "device.after-claim@3",
            "--crash-at", "p1:device.after-page-commit,p2:device.after-ledger-write",
        ])
        let configuration = try DeviceCommandLine.configuration(options)
        #expect(configuration.crashAt == [ArmedCrash(point: .deviceAfterClaim, nth: 3),
                                          ArmedCrash(device: "p1", point: .deviceAfterPageCommit)])
        let wrong = try DeviceCommandLine.spec.parse(Self.base + ["--crash-at", "server.after-reply"])
        #expect(throws: LabError.self) { _ = try DeviceCommandLine.configuration(wrong) }
    }

    @Test func aPoolArmsTheNamedDeviceOnlyAndRefusesAStranger() throws {
        let folder = TempFolder()
        let spec = folder.file("spec.json")
        try """
            {"devices": [
              {"id": "p1", "account": "acme", "token": "t1", "platform": "android", "db": "\(folder.path)/p1.sqlite"},
              {"id": "p2", "account": "acme", "token": "t2", "platform": "ios", "db": "\(folder.path)/p2.sqlite"}]}
            """.write(toFile: spec, atomically: true, encoding: .utf8)
        let options = try DevicePoolCommandLine.spec.parse(["--spec", spec, "--server", "tcp://127.0.0.1:1",
                                                            "--crash-at", "p2:device.after-send-before-reply@2"])
        let pool = try DevicePoolCommandLine.configuration(options)
        let armed = ArmedCrash(device: "p2", point: .deviceAfterSendBeforeReply, nth: 2)
        #expect(pool.devices.map(\.crashAt) == [[], [armed]])
        let stranger = try DevicePoolCommandLine.spec.parse(["--spec", spec, "--server", "tcp://127.0.0.1:1",
                                                             "--crash-at", "p9:device.after-claim"])
        #expect(throws: LabError.self) { _ = try DevicePoolCommandLine.configuration(stranger) }
    }
}
