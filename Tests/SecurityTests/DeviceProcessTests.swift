import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// A real `synclab-device` started as the launcher starts it under CURVE: key and token by file only.
@Suite struct DeviceProcessTests {
    @Test func deviceRunsCurveWithNoSecretOnItsCommandLineAndControlOnlyForTheLauncher() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let tokenFile = lab.folder.file("keys/pixel.token")
            try "t-pixel\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            let control = lab.folder.ipc("pixel-control.ipc")
            let device = try ChildProcess(try Binaries.path("synclab-device"), [
                "--id", "pixel", "--account", "acme", "--token-file", tokenFile, "--platform", "android",
                "--db", lab.folder.file("pixel.sqlite"), "--server", lab.serverListen, "--broker", lab.brokerListen,
                "--control", control, "--events", lab.folder.file("pixel.jsonl"), "--start-state", "foreground",
                "--key-file", lab.secretFile("pixel"), "--server-key-file", lab.publicFile("server"),
                "--broker-key-file", lab.publicFile("broker"), "--launcher-key-file", lab.publicFile("launcher"),
            ], log: lab.folder.file("pixel.log"))
            defer { device.killNow() }
            // Nothing secret is visible in its argv (what `ps` shows to every local user).
            let cmdline = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(device.pid)/cmdline")),
                                     as: UTF8.self)
            #expect(!cmdline.contains("t-pixel"))
            #expect(!cmdline.contains(lab.keys["pixel"]!.secretKey))
            // The launcher's key is answered; the device syncs over CURVE with the server and registers with the
            // broker (both check its key against the accounts file).
            let launcher = try lab.launcher(control, serverKey: "pixel")
            #expect(lab.eventually(timeout: 20) { (try? launcher.ack("ping", timeoutMs: 200))??.ok == true })
            #expect(try launcher.ack("edit", ["draft": "d1", "action": "create", "title": "hi"])?.ok == true)
            #expect(lab.eventually(timeout: 20) {
                lab.events(lab.serverEvents, type: "op.applied").contains { $0["device"]?.stringValue == "pixel" }
            })
            #expect(lab.eventually(timeout: 20) {
                lab.events(lab.brokerEvents, type: "device.registered")
                    .contains { $0["device"]?.stringValue == "pixel" }
            })
            // Anyone else, even with a valid key of the lab, gets nothing from its control socket.
            for pair in [lab.keys["laptop"]!, lab.keys["server"]!, try CurveKeyPair.generate()] {
                let other = try lab.launcher(control, serverKey: "pixel", pair: pair)
                #expect(try other.ack("stop", timeoutMs: silenceMs) == nil)
            }
            let null = try lab.launcher(control, serverKey: "pixel", null: true)
            #expect(try null.ack("stop", timeoutMs: silenceMs) == nil)
            #expect(device.wait(timeout: 0) == nil, "the device stopped")
        }
    }
}
