import Foundation
import SyncProtocol
import Testing

/// A real pooled run: `synclab` starts the server, the broker and two `synclab-device pool` processes hosting 30
/// devices of two accounts, plays `topologies/pooled-30.json5` (hint chaos, a pool killed and restarted through one
/// of its devices), and the report's verdict and figures are asserted.
@Suite(.serialized) struct PoolEndToEndTests {
    @Test func thirtyPooledDevicesPassEveryInvariant() throws {
        let run = try EndToEndTests.run("pooled-30", limit: 90)
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        #expect(run.report["verdict"]?.stringValue == "pass")
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
        // The kill of one pooled device took its whole pool down and the restart brought it back.
        let events = (try? String(contentsOfFile: "\(run.folder)/events.jsonl", encoding: .utf8)) ?? ""
        let restarts = events.split(separator: "\n").filter {
            $0.contains("\"type\":\"process.restarted\"") && $0.contains("\"target\":\"pool-")
        }
        #expect(!restarts.isEmpty)
        // Each pooled device wrote its own events under its own id.
        #expect(events.contains("\"proc\":\"blue-15\""))
        #expect(events.contains("\"proc\":\"red-1\""))
    }
}
