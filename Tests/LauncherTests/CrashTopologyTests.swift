import Foundation
import LabKit
import SyncProtocol
import Testing

/// Real runs of the topologies that take the dangerous paths: every crash point fired, and crash.json5's and
/// unknown-outcome-before-commit.json5's resends, lease reclaims, unknown outcomes the server had not applied and
/// hints lost with a killed broker, each counted from the run's events and report.
@Suite(.serialized) struct CrashTopologyTests {
    /// Every event of a run folder's events.jsonl.
    static func events(_ run: EndToEndTests.Run) -> [JSONValue] {
        let text = (try? String(contentsOfFile: "\(run.folder)/events.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    static func ofType(_ type: String, _ events: [JSONValue]) -> [JSONValue] {
        events.filter { $0["type"]?.stringValue == type }
    }

    /// Keys whose device recorded an unknown outcome before the server had applied them: the first `op.applied` of
    /// the key comes after the unknown (so a resend, not the lost request, applied it).
    static func unknownNotApplied(_ events: [JSONValue]) -> Set<String> {
        var firstUnknown: [String: Double] = [:]
        var firstApplied: [String: Double] = [:]
        for event in events {
            guard let key = event["key"]?.stringValue, let sim = event["sim"]?.doubleValue else { continue }
            switch event["type"]?.stringValue {
            case "op.result" where event["outcome"]?.stringValue == "unknown":
                if firstUnknown[key] == nil { firstUnknown[key] = sim }
            case "op.applied":
                if firstApplied[key] == nil { firstApplied[key] = sim }
            default:
                break
            }
        }
        return Set(firstUnknown.filter { key, sim in (firstApplied[key] ?? -1) > sim }.keys)
    }

    @Test func everyCrashPointOfEveryRoleFiresAndTheRunPasses() throws {
        let run = try EndToEndTests.run("crash-points", limit: 240)
        defer { EndToEndTests.expectNoneLeft(run) }
        run.expectPassed()
        let events = Self.events(run)
        let crashing = Set(Self.ofType("process.crashing", events).compactMap { $0["point"]?.stringValue })
        let killed = Set(Self.ofType("process.killed", events).compactMap { $0["point"]?.stringValue })
        for point in CrashPoint.allCases {
            #expect(crashing.contains(point.rawValue), "no process.crashing at \(point.rawValue)")
            #expect(killed.contains(point.rawValue), "the launcher did not notice the death at \(point.rawValue)")
        }
        // Each death was followed by a restart of the same process, and the report lists where each one landed.
        #expect(Self.ofType("process.restarted", events).count >= CrashPoint.allCases.count)
        let listed = run.report["crashes"]?.arrayValue ?? []
        #expect(Set(listed.compactMap { $0["point"]?.stringValue }) == Set(CrashPoint.allCases.map(\.rawValue)))
        #expect(listed.allSatisfy { $0["restartedSim"]?.doubleValue != nil })
        // Every point fired with work in flight (issue 30): a claim with ops, a page with changes, applied ops.
        for row in run.report["crashCoverage"]?.arrayValue ?? [] {
            #expect((row["firedWithWork"]?.intValue ?? 0) >= 1, "\(row) never fired with work in flight")
        }
        #expect(run.report["crashCoverage"]?.arrayValue?.count == CrashPoint.allCases.count)
        for event in Self.ofType("process.crashing", events) {
            #expect((event["work"]?.intValue ?? 0) > 0, "a crash with nothing in flight: \(event)")
        }
    }

    @Test func crashTakesEveryDangerousPath() throws {
        let run = try EndToEndTests.run("crash", limit: 180)
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        let events = Self.events(run)
        #expect((run.report["ops"]?["resends"]?.intValue ?? 0) > 0, "no resends")
        #expect((run.report["ops"]?["unknownOutcomes"]?.intValue ?? 0) > 0, "no unknown outcomes")
        let reclaimed = Self.ofType("lease.reclaimed", events).reduce(0) { $0 + ($1["count"]?.intValue ?? 0) }
        #expect(reclaimed > 0, "no lease reclaimed")
        #expect(!Self.unknownNotApplied(events).isEmpty, "no unknown outcome the server had not applied")
        #expect((run.report["hints"]?["lostWithKilledBroker"]?.intValue ?? 0) > 0, "no hint lost with the broker")
        // And an unknown outcome the server had applied (a crash after its commit): the resend is a duplicate.
        #expect(!Self.ofType("op.duplicate", events).isEmpty, "no resend answered duplicate")
        #expect(run.report["ops"]?["saved"]?.intValue == run.report["ops"]?["applied"]?.intValue)
        #expect(events.contains { $0["type"]?.stringValue == "op.saved" && $0["action"]?.stringValue == "delete" },
                "the behaviours deleted nothing")
    }

    @Test func requestsLostBeforeTheCommitAreAppliedByTheResend() throws {
        let run = try EndToEndTests.run("unknown-outcome-before-commit", limit: 180)
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        let events = Self.events(run)
        let dropped = Self.ofType("fault.injected", events).filter { $0["kind"]?.stringValue == "dropRequest" }
        #expect(!dropped.isEmpty, "no request dropped")
        let notApplied = Self.unknownNotApplied(events)
        #expect(!notApplied.isEmpty)
        // Every key dropped before its commit was applied later, by a resend.
        let droppedKeys = Set(dropped.compactMap { $0["key"]?.stringValue })
        let applied = Set(Self.ofType("op.applied", events).compactMap { $0["key"]?.stringValue })
        #expect(droppedKeys.isSubset(of: applied))
        #expect(run.invariant("no-lost-edit").held && run.invariant("exactly-once").held)
    }
}
