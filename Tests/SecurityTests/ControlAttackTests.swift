import Foundation
import LabControl
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// Control sockets admit only the launcher's key: anyone else cannot stop a process, add a device, set faults or
/// read stats.
@Suite struct ControlAttackTests {
    @Test(arguments: ["server", "broker"])
    func launcherKeyIsServed(_ target: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let endpoint = target == "server" ? lab.serverControl : lab.brokerControl
            let launcher = try lab.launcher(endpoint, serverKey: target)
            #expect(try launcher.ack("ping")?.ok == true)
        }
    }

    /// Without the launcher's key (plaintext, an unknown key, a device's key) nothing is answered and `stop`,
    /// `addDevice` and `faults` do nothing.
    @Test(arguments: ["server", "broker"], ["null", "unknown", "device"])
    func controlWithoutLauncherKeyDoesNothing(_ target: String, _ who: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let endpoint = target == "server" ? lab.serverControl : lab.brokerControl
            let attacker: ControlClient
            switch who {
            case "null": attacker = try lab.launcher(endpoint, serverKey: target, null: true)
            case "unknown": attacker = try lab.launcher(endpoint, serverKey: target, pair: try CurveKeyPair.generate())
            default: attacker = try lab.launcher(endpoint, serverKey: target, pair: lab.keys["pixel"]!)
            }
            try lab.expectUnchanged {
                let commands: [(String, [String: JSONValue])] = [
                    ("stats", [:]), ("faults", ["reject": 1]), ("chaos", ["loss": 1]),
                    ("addDevice", ["account": "acme", "device": "evil", "platform": "web", "token": "t-evil"]),
                    ("stop", [:]),
                ]
                for (command, args) in commands {
                    let ack = try attacker.ack(command, args, timeoutMs: silenceMs / 2)
                    #expect(ack == nil, "\(command) was answered")
                }
            }
            // Still serving, with no fault set.
            let launcher = try lab.launcher(endpoint, serverKey: target)
            #expect(try launcher.ack("ping")?.ok == true)
            if target == "server" {
                let pixel = try lab.helloed("pixel")
                guard case .pushResult(let result)? = try pixel.push([SecureLab.op("pixel-1")]) else {
                    Issue.record("no pushResult")
                    return
                }
                #expect(result.results.first?.outcome == .applied)
            }
        }
    }
}
