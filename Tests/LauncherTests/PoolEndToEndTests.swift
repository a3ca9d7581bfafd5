import Foundation
import LabKit
import SyncProtocol
import Testing

/// A real pooled run: `synclab` starts the server, the broker and two `synclab-device pool` processes hosting 30
/// devices of two accounts, plays `topologies/pooled-30.json5` (hint chaos, a pool killed and restarted through one
/// of its devices), and the report's verdict and figures are asserted.
@Suite(.serialized) struct PoolEndToEndTests {
    @Test func thirtyPooledDevicesPassEveryInvariant() throws {
        let run = try EndToEndTests.run("pooled-30", limit: 90)
        defer { EndToEndTests.expectNoneLeft(run) }
        run.expectPassed()
        for name in ["no-lost-edit", "exactly-once", "convergence", "cursor-safety", "hints-are-references",
                     "hints-accounted"] {
            #expect(run.invariant(name).held, "\(name): \(run.invariant(name).detail)")
        }
        // Every pooled device kept its own ledger where the checks read it.
        for account in ["red", "blue"] {
            for n in 1...15 {
                let path = "\(run.folder)/devices/\(account)-\(n).sqlite"
                #expect(FileManager.default.fileExists(atPath: path), "\(path)")
            }
        }
        #expect((run.report["propagation"]?["count"]?.intValue ?? 0) > 0)
        #expect((run.report["ops"]?["saved"]?.intValue ?? 0) > 0)
        let cost = run.report["cost"]
        #expect(cost?["devices"]?.intValue == 30)
        #expect(cost?["pools"]?.intValue == 2)
        #expect(cost?["processes"]?.intValue == 4)
        #expect((cost?["events"]?.intValue ?? 0) > 0)
        // The scenario's CPU per delivered change, every process counted, and by role (the bench's figure).
        #expect((cost?["scenarioCpuMsPerDelivered"]?.doubleValue ?? 0) > 0)
        for role in ["server", "broker", "devices"] {
            #expect((cost?["scenarioCpuSeconds"]?[role]?.doubleValue ?? 0) > 0, "\(role)'s CPU in the scenario")
        }
        let markdown = (try? String(contentsOfFile: "\(run.folder)/report.md", encoding: .utf8)) ?? ""
        #expect(markdown.contains("ms of CPU per delivered change, every process counted"))
        // The kill of one pooled device took its whole pool down and the restart brought it back.
        let events = (try? String(contentsOfFile: "\(run.folder)/events.jsonl", encoding: .utf8)) ?? ""
        let restarts = events.split(separator: "\n").filter {
            $0.contains("\"type\":\"process.restarted\"") && $0.contains("\"target\":\"pool-")
        }
        #expect(!restarts.isEmpty)
        // Each pooled device wrote its own events under its own id.
        #expect(events.contains("\"proc\":\"blue-15\""))
        #expect(events.contains("\"proc\":\"red-1\""))
        // One broker connection per pool (docs/PROTOCOL.md, "Pooled links"): each pooled device's registration
        // came over its pool's connection, so its virtual peer starts with that connection's 16-byte routing id,
        // and a pool's run (start or restart) brings one such prefix, not one per device.
        let registered = events.split(separator: "\n").filter { $0.contains("\"type\":\"device.registered\"") }
            .compactMap { try? JSONValue.parse(String($0)) }
        let connections = Set(registered.compactMap { $0["peer"]?.stringValue?.prefix(2 + 32) })
        #expect(Set(registered.compactMap { $0["device"]?.stringValue }).count == 30)
        #expect(!connections.isEmpty && connections.count <= 2 * (1 + restarts.count),
                "\(connections.count) broker connections for 2 pools restarted \(restarts.count) times")
        // And one server connection per pool (§14): each pooled device's hello came over its pool's connection, as
        // a virtual peer (the connection's routing id, 00, the device id), one connection per pool's run.
        let hellos = events.split(separator: "\n").filter { $0.contains("\"type\":\"hello.accepted\"") }
            .compactMap { try? JSONValue.parse(String($0)) }
        #expect(Set(hellos.compactMap { $0["device"]?.stringValue }).count == 30)
        for hello in hellos {
            let device = hello["device"]?.stringValue ?? ""
            let suffix = "00" + device.utf8.map { String(format: "%02x", $0) }.joined()
            #expect(hello["peer"]?.stringValue?.hasSuffix(suffix) == true, "\(device)'s hello on its own connection")
        }
        let serverConnections = Set(hellos.compactMap { $0["peer"]?.stringValue?.prefix(32) })
        #expect(serverConnections.count <= 2 * (1 + restarts.count),
                "\(serverConnections.count) server connections for 2 pools restarted \(restarts.count) times")
        // The pulls a pool's devices made in one turn went to the server in bundles (§15), none lost at a full
        // socket and no reply left without its device: the pools' own counts as they stopped (a killed pool
        // writes none).
        let pulls = events.split(separator: "\n").filter { $0.contains("\"type\":\"process.stopped\"") }
            .compactMap { try? JSONValue.parse(String($0)) }.filter { $0["role"]?.stringValue == "pool" }
            .compactMap { $0["pulls"] }
        #expect(!pulls.isEmpty, "the pools' process.stopped lines carry their pull counts")
        #expect(pulls.contains { ($0["bundles"]?.intValue ?? 0) > 0 }, "no pool sent a bundle: \(pulls)")
        #expect(pulls.allSatisfy { $0["lost"]?.intValue == 0 && $0["strays"]?.intValue == 0 }, "\(pulls)")
        // And a notice's hints to a pool's devices came from the broker in bundles (§16), each read whole.
        let stopped = events.split(separator: "\n").filter { $0.contains("\"type\":\"process.stopped\"") }
            .compactMap { try? JSONValue.parse(String($0)) }
        let sent = stopped.first { $0["role"]?.stringValue == "broker" }?["hintBundles"]
        #expect((sent?["bundles"]?.intValue ?? 0) > 0, "the broker bundled no hints: \(String(describing: sent))")
        let received = stopped.filter { $0["role"]?.stringValue == "pool" }.compactMap { $0["hintLink"] }
        #expect(received.contains { ($0["bundles"]?.intValue ?? 0) > 0 }, "no pool read a bundle: \(received)")
        #expect(received.allSatisfy { $0["strays"]?.intValue == 0 }, "\(received)")
    }
}
