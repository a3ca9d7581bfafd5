import Foundation
import Testing
@testable import Launcher

/// The `program` key of a device (docs/DEVICE-CONTRACT.md): a bad one is an error naming the file, the line and
/// the key, before anything starts; what the lab cannot do with an outside device is refused by name.
struct OutsideTopologyTests {
    static let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/python-device/device.py").standardized.path

    static func topology(device: String, extra: String = "") -> String {
        """
        {
          duration: "5m",
          \(extra)
          accounts: [{ id: "a", devices: [
            { id: "d1", platform: "android" },
            \(device),
          ] }],
        }
        """
    }

    @Test func aGoodProgramIsRead() throws {
        let t = try Topology.parse(Self.topology(device: """
            { id: "p1", platform: "ios", programTimeoutMs: 3000, program: ["python3", "\(Self.python)", "--flag"] }
            """), file: "t.json5", defaultName: "t")
        let outside = try #require(t.devices.first { $0.id == "p1" })
        #expect(outside.program == ["python3", Self.python, "--flag"])
        #expect(outside.programTimeoutMs == 3000)
        #expect(t.devices.first { $0.id == "d1" }?.program == nil)
    }

    @Test(arguments: [
        (#"program: "python3 device.py""#, "accounts[0].devices[1].program", "non-empty list of strings"),
        (#"program: []"#, "accounts[0].devices[1].program", "non-empty list of strings"),
        (#"program: ["python3", 7]"#, "accounts[0].devices[1].program", "non-empty list of strings"),
        (#"program: ["no-such-interpreter-xyz", "a.py"]"#, "accounts[0].devices[1].program[0]",
         "cannot find the program"),
        (#"program: ["python3", "student/missing.py"]"#, "accounts[0].devices[1].program[1]",
         "no file \"student/missing.py\""),
        (#"programTimeoutMs: 500"#, "accounts[0].devices[1].programTimeoutMs", "outside device only"),
    ])
    func aBadProgramNamesItsKey(_ key: String, _ path: String, _ words: String) throws {
        let error = try #require(topologyRefusal(Self.topology(device: "{ id: \"p1\", platform: \"ios\", \(key) }")))
        #expect(error.file == "t.json5")
        #expect(error.key == path, "\(error)")
        #expect(error.message.contains(words), "\(error)")
        #expect(error.line == 6, "\(error)")  // the device's line
    }

    @Test(arguments: [
        (#"scenario: [{ at: "1m", action: "crash", target: "p1", point: "device.after-send-before-reply" }],"#,
         "scenario", "crash is not supported for the outside device \"p1\""),
        (#"scenario: [{ at: "1m", action: "reinstall", device: "p1" }],"#, "scenario", "reinstall is not supported"),
        (#"checks: { dataAgeAtOpen: { percent: 90 } },"#, "checks.dataAgeAtOpen", "an outside device has none"),
        (#"pools: 1,"#, "pools", "cannot use pools"),
    ])
    func whatTheLabCannotDoIsRefused(_ extra: String, _ key: String, _ words: String) throws {
        let device = "{ id: \"p1\", platform: \"ios\", program: [\"python3\", \"\(Self.python)\"] }"
        let error = try #require(topologyRefusal(Self.topology(device: device, extra: extra)))
        #expect(error.key == key, "\(error)")
        #expect(error.message.contains(words), "\(error)")
        // The lab's own device may do all of it.
        let own = topologyRefusal(Self.topology(device: "{ id: \"p1\", platform: \"ios\" }", extra: extra))
        #expect(own == nil, "\(String(describing: own))")
    }
}
