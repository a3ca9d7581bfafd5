import Foundation
import Testing
@testable import Launcher

/// Product checks: each off unless a topology states it, each able to fail with a counter-example.
@Suite struct ProductCheckTests {
    @Test func dataAgeAtOpenFailsWhenTooFewOpensAreFresh() throws {
        var fixture = try RunFixture()
        fixture.topologyExtra = "checks: { dataAgeAtOpen: { percent: 90, budgetMin: 30 } },"
        fixture.opens["b"] = [(100, 60), (200, 5 * 3600), (300, nil)]
        fixture.opens["a"] = [(100, 60)]
        let report = try fixture.report()
        let result = try #require(report.checks.first { $0.name == "data-age-at-open" })
        #expect(!result.held)
        #expect(result.violations.count == 1)
        #expect(result.detail.contains("b: 1 of 3 opens (33.3 %) showed data within the 30m00s budget; at least 90 % "
            + "required; worst: never synced at 5m00s"), "\(result.detail)")
        #expect(!report.passed)
        #expect(report.json["checks"]?.arrayValue?.first?["held"]?.boolValue == false)
    }

    @Test func unsyncedAt24hFailsForAnEditTheServerNeverApplied() throws {
        var fixture = try RunFixture()
        fixture.topologyExtra = "checks: { unsyncedAt24h: { maxPercent: 10, per: \"platform\" } },"
        fixture.events.append(fixture.event(50, "b", "op.saved",
            #""key":"k8","draft":"d1","action":"update","account":"acme","base":1"#))
        fixture.deviceOps["b"] = [.init(key: "k8", status: "needsAttention", error: "refused", action: "update")]
        fixture.keyRecords["k8"] = ("b", "rejected", "refused")
        let result = try #require(try fixture.report().checks.first { $0.name == "unsynced-at-24h" })
        #expect(!result.held)
        #expect(result.detail.contains("ios: 1 of 1 edits (100 %) were not on the server 24 h after they were saved; "
            + "at most 10 % allowed; first: op k8 saved on b at 50s"), "\(result.detail)")
        #expect(result.violations.first?.device == nil)
    }

    @Test func settledAfterHealFailsForAPendingOp() throws {
        var fixture = try RunFixture()
        fixture.topologyExtra = "checks: { settledAfterHealMin: 10 },"
        fixture.events.append(fixture.event(60, "launcher", "phase", #""name":"heal""#))
        fixture.deviceOps["b"] = [.init(key: "k3", status: "waitingToSend", error: "")]
        let result = try #require(try fixture.report().checks.first { $0.name == "settled-after-heal" })
        #expect(!result.held)
        #expect(result.detail.contains("op k3 on b is still waitingToSend at the end"), "\(result.detail)")
    }

    /// A pass that sent nothing and applied nothing is wasted work (no unique work: every trigger a full pass).
    @Test func wastedPassesFailsWhenTooManyPassesDoNothing() throws {
        var fixture = try RunFixture()
        fixture.topologyExtra = "checks: { wastedPasses: { maxPercent: 40 } },"
        for n in 2...4 { fixture.events += fixture.emptyPass(30 + n, "b", pass: n, trigger: "push") }
        let result = try #require(try fixture.report().checks.first { $0.name == "wasted-passes" })
        #expect(!result.held)
        #expect(result.detail.contains("b: 3 of 4 passes (75 %) sent nothing and applied nothing; at most 40 % "
            + "allowed"),
                "\(result.detail)")
        #expect(result.violations.map(\.device) == ["b"])
    }

    /// Heal's and quiesce's passes are not the design's: only passes that started during the scenario count, even
    /// when they end after it.
    @Test func wastedPassesCountsOnlyPassesThatStartedInTheScenario() throws {
        var fixture = try RunFixture()
        defer { fixture.remove() }
        fixture.topologyExtra = "checks: { wastedPasses: { maxPercent: 40 } },"
        fixture.events.append(fixture.event(58, "b", "pass.start", #""pass":2,"trigger":"push""#))
        fixture.events.append(fixture.event(60, "launcher", "phase", #""name":"heal""#))
        fixture.events.append(fixture.event(62, "b", "pass.end",
                                            #""pass":2,"trigger":"push","sent":0,"pulled":0,"cursor":1,"#
                                                + #""cutOff":false,"outcome":"completed","durationSec":4"#))
        for n in 3...6 {
            fixture.events += fixture.emptyPass(62 + n, "b", pass: n, trigger: "manual", durationSec: "0.5")
        }
        let result = try #require(try fixture.report().checks.first { $0.name == "wasted-passes" })
        #expect(!result.held)
        #expect(result.detail.contains("b: 1 of 2 passes (50 %) sent nothing and applied nothing"), "\(result.detail)")
    }

    @Test func withoutChecksNoneRuns() throws {
        let fixture = try RunFixture()
        #expect(try fixture.report().checks.isEmpty)
    }
}
