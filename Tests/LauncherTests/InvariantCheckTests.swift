import Foundation
import Testing
@testable import Launcher

/// Each checker passes on a good run folder and fails, naming the counter-example, on one that breaks it.
@Suite struct InvariantCheckTests {
    @Test func aGoodRunPassesEveryInvariant() throws {
        let fixture = try RunFixture()
        defer { fixture.remove() }
        let report = try fixture.report()
        for result in report.invariants { #expect(result.held, "\(result.name): \(result.detail)") }
        #expect(report.invariants.map(\.name) == [
            "no-lost-edit", "exactly-once", "convergence", "cursor-safety", "hints-are-references", "hints-accounted",
        ])
        #expect(report.passed)
        let json = report.json
        #expect(json["verdict"]?.stringValue == "pass")
        #expect(json["hints"]?["accepted"]?.intValue == 1)
        #expect(json["hints"]?["delivered"]?.intValue == 1)
        #expect(json["ops"]?["saved"]?.intValue == 1)
        #expect(json["passes"]?["byTrigger"]?["push"]?.intValue == 1)
        #expect(json["propagation"]?["count"]?.intValue == 1)
        #expect(json["propagation"]?["byPath"]?["push"]?["p50Ms"]?.doubleValue == 6)
        #expect(json["platforms"]?.arrayValue?.count == 2)
    }

    @Test func aChangeAppliedTwiceBreaksExactlyOnce() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.changes.append((2, "d1", "k1", "a"))
        let result = try #require(try fixture.report().invariant("exactly-once"))
        #expect(!result.held)
        #expect(result.detail.contains("k1 applied twice"))
    }

    @Test func aCursorPastAnUnappliedChangeBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.changes.append((2, "d2", "k2", "a"))
        fixture.deviceOps["a"]!.append(("k2", "completed", ""))
        fixture.events.append(fixture.event(20, "b", "cursor.moved", #""from":1,"to":2,"pass":2"#))
        let result = try #require(try fixture.report().invariant("cursor-safety"))
        #expect(!result.held)
        #expect(result.detail.contains("past change 2"))
    }

    @Test func aCursorThatMovesBackBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.events.append(fixture.event(20, "b", "cursor.moved", #""from":0,"to":0,"pass":2"#))
        let result = try #require(try fixture.report().invariant("cursor-safety"))
        #expect(!result.held)
        #expect(result.detail.contains("decreased"))
    }

    @Test func aCursorBeyondTheHeadBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.cursors["b"] = 5
        let result = try #require(try fixture.report().invariant("cursor-safety"))
        #expect(!result.held)
        #expect(result.detail.contains("beyond the server's head"))
    }

    @Test func aHintCarryingABodyBreaksHintsAreReferences() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.events.append(fixture.event(21, "b", "hint.received", #""hint":"h-2","head":1,"keys":["account","body","head","hint"]"#))
        let result = try #require(try fixture.report().invariant("hints-are-references"))
        #expect(!result.held)
        #expect(result.detail.contains("body"))
    }

    @Test func anOpMissingFromTheLedgerBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.events.append(fixture.event(22, "b", "op.saved", #""key":"k9","draft":"d1","action":"update","account":"acme","base":1"#))
        let result = try #require(try fixture.report().invariant("no-lost-edit"))
        #expect(!result.held)
        #expect(result.detail.contains("k9"))
    }

    @Test func aPendingOpAfterQuiesceBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.deviceOps["b"] = [("k3", "confirmationDelayed", "")]
        let result = try #require(try fixture.report().invariant("no-lost-edit"))
        #expect(!result.held)
        #expect(result.detail.contains("still confirmationDelayed"))
    }

    @Test func aCompletedOpTheServerNeverAppliedBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.deviceOps["b"] = [("k4", "completed", "")]
        let result = try #require(try fixture.report().invariant("no-lost-edit"))
        #expect(!result.held)
        #expect(result.detail.contains("never applied"))
    }

    @Test func needsAttentionWithAReasonIsNotALostEdit() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.deviceOps["b"] = [("k5", "needsAttention", "rejected: too large")]
        let result = try #require(try fixture.report().invariant("no-lost-edit"))
        #expect(result.held, "\(result.detail)")
        #expect(result.detail.contains("1 need attention"))
        fixture.deviceOps["b"] = [("k5", "needsAttention", "")]
        #expect(try fixture.report().invariant("no-lost-edit")?.held == false)
    }

    @Test func aReplicaThatDiffersBreaksConvergence() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.deviceDrafts["b"] = [("d1", "T", "stale", 0)]
        let result = try #require(try fixture.report().invariant("convergence"))
        #expect(!result.held)
        #expect(result.detail.contains("b: draft d1"))
    }

    @Test func aHintWithoutAFateBreaksHintsAccounted() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.events.append(fixture.event(30, "broker", "hint.accepted", #""hint":"h-2","device":"a","account":"acme","head":1,"origin":"b","seqs":[1]"#))
        // The broker claims to hold nothing, yet h-2 has no fate.
        let result = try #require(try fixture.report().invariant("hints-accounted"))
        #expect(!result.held)
        #expect(result.detail.contains("holds 0"))
        // Once the broker says it holds one, the books balance.
        fixture.brokerHeld = 1
        #expect(try fixture.report().invariant("hints-accounted")?.held == true)
    }

    @Test func aHintWithTwoFatesBreaksHintsAccounted() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.events.append(fixture.event(31, "broker", "hint.dropped", #""hint":"h-1","device":"b","reason":"chaos-loss""#))
        let result = try #require(try fixture.report().invariant("hints-accounted"))
        #expect(!result.held)
        #expect(result.detail.contains("second fate"))
    }

    @Test func hintsHeldByAKilledBrokerAreCountedAsLostWithIt() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.events.append(fixture.event(32, "broker", "hint.accepted", #""hint":"h-2","device":"a","account":"acme","head":1,"origin":"b","seqs":[1]"#))
        fixture.events.append(fixture.event(33, "broker", "process.started", #""role":"broker""#))
        let report = try fixture.report()
        let result = try #require(report.invariant("hints-accounted"))
        #expect(result.held, "\(result.detail)")
        #expect(report.json["hints"]?["lostWithKilledBroker"]?.intValue == 1)
    }

    @Test func reportsAreWrittenInThreeForms() throws {
        let fixture = try RunFixture()
        defer { fixture.remove() }
        let report = try fixture.report()
        report.write()
        let json = try String(contentsOfFile: fixture.folder.path("report.json"), encoding: .utf8)
        #expect(json.contains("\"verdict\":\"pass\""))
        let md = try String(contentsOfFile: fixture.folder.path("report.md"), encoding: .utf8)
        #expect(md.contains("## Invariants"))
        #expect(md.contains("`k1` d1 saved on a"))
        let html = try String(contentsOfFile: fixture.folder.path("report.html"), encoding: .utf8)
        #expect(html.contains("<table>"))
        #expect(report.summary.contains("PASS"))
    }
}
