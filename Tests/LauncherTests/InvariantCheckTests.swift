import Foundation
import Testing
@testable import Launcher

/// Each check passes on a good hand-made run folder (real schemas, rows written by hand) and fails on one that
/// breaks it, naming the counter-example in words a student follows.
@Suite struct InvariantCheckTests {
    /// The one failing check and its first counter-example; every other check must hold.
    func onlyFailing(_ fixture: RunFixture, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> InvariantResult
    {
        let report = try fixture.report()
        for result in report.invariants where result.name != name {
            #expect(result.held, "\(result.name) should hold: \(result.detail)", sourceLocation: sourceLocation)
        }
        let result = try #require(report.invariant(name), sourceLocation: sourceLocation)
        #expect(!result.held, "\(name) should fail", sourceLocation: sourceLocation)
        #expect(!report.passed, sourceLocation: sourceLocation)
        return result
    }

    /// `name` is the one failing check and its detail says `words`.
    func expectOnlyFailing(_ fixture: RunFixture, _ name: String, saying words: String,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try onlyFailing(fixture, name, sourceLocation: sourceLocation)
        #expect(result.detail.contains(words), "\(name): \(result.detail)", sourceLocation: sourceLocation)
    }

    /// `name` fails, whatever the other checks do, and its detail says `words`.
    func expectFailing(_ fixture: RunFixture, _ name: String, saying words: String,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try #require(try fixture.report().invariant(name), sourceLocation: sourceLocation)
        #expect(!result.held, "\(name) should fail", sourceLocation: sourceLocation)
        #expect(result.detail.contains(words), "\(name): \(result.detail)", sourceLocation: sourceLocation)
    }

    @Test func aGoodRunPassesEveryInvariant() throws {
        let fixture = try RunFixture()
        let report = try fixture.report()
        for result in report.invariants { #expect(result.held, "\(result.name): \(result.detail)") }
        #expect(report.invariants.map(\.name) == [
            "no-lost-edit", "exactly-once", "monotonic-writes", "intent", "read-your-writes", "monotonic-reads",
            "convergence", "cursor-safety", "hints-are-references", "hints-accounted", "open-reaches-head",
            "quiesce-settles",
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

    // MARK: exactly-once

    @Test func aKeyAppliedTwiceBreaksExactlyOnce() throws {
        var fixture = try RunFixture()
        fixture.addUpdateOfD1(key: "k1")
        try expectOnlyFailing(fixture, "exactly-once", saying: "key k1 applied twice: seq 1 and seq 2")
    }

    /// The lost-ack double apply: a resend under a new key. Every key is applied once, but the second key belongs to
    /// no op the device saved.
    @Test func aChangeUnderAKeyNoDeviceSavedBreaksExactlyOnce() throws {
        var fixture = try RunFixture()
        fixture.addUpdateOfD1(key: "k1-retry")
        let result = try onlyFailing(fixture, "exactly-once")
        #expect(result.detail.contains("change seq 2 of acme (update d1 from a) was applied under key k1-retry, "
            + "which no op saved on a holds"), "\(result.detail)")
        #expect(result.violations.contains { $0.text.contains("acme has 2 changes but its devices saved only 1 ops") })
        #expect(result.violations.first?.device == "a" && result.violations.first?.account == "acme")
    }

    @Test func aGapInTheSeqsBreaksExactlyOnce() throws {
        var fixture = try RunFixture()
        fixture.changes = [.init(seq: 2, draft: "d1", key: "k1", origin: "a")]
        fixture.moveCursors(to: 2)
        fixture.events = fixture.events.map { $0.replacingOccurrences(of: #""seq":1,"draft""#,
            with: #""seq":2,"draft""#) }
        try expectOnlyFailing(fixture, "exactly-once", saying: "change seq 2 follows seq 0")
    }

    @Test func anApplyTheServerReportedButDidNotKeepBreaksExactlyOnce() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(15, "server", "op.applied",
                                            #""device":"a","account":"acme","key":"k7","seq":2,"draft":"d1","#
                                                + #""action":"update","version":2,"conflict":false"#))
        fixture.events.append(fixture.event(15, "a", "op.saved",
            #""key":"k7","draft":"d1","action":"update","account":"acme","base":1"#))
        fixture.deviceOps["a"]!.append(.init(key: "k7", status: "completed", error: "", action: "update"))
        let report = try fixture.report()
        let result = try #require(report.invariant("exactly-once"))
        #expect(!result.held)
        #expect(result.detail.contains("reported key k7 applied as seq 2")
            && result.detail.contains("has no such change"),
                "\(result.detail)")
        // The device believes it: no-lost-edit says the acknowledgement came without a commit.
        #expect(report.invariant("no-lost-edit")?.detail.contains("completed on the device but the server never "
            + "applied it")
            == true)
    }

    // MARK: no-lost-edit

    @Test func anOpMissingFromTheLedgerBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(22, "b", "op.saved",
            #""key":"k9","draft":"d1","action":"update","account":"acme","base":1"#))
        fixture.events.append(fixture.event(25, "launcher", "process.killed", #""target":"b","signal":"SIGKILL""#))
        try expectOnlyFailing(fixture, "no-lost-edit",
                              saying: "op k9 (update d1) saved on b at 22s is not in its ledger and the server never "
                              + "applied it: b was killed at 25s")
    }

    @Test func aReinstallBeforeAnyPassSentTheOpIsExplained() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(22, "b", "op.saved",
            #""key":"k9","draft":"d1","action":"update","account":"acme","base":1"#))
        fixture.events.append(fixture.event(40, "b", "app.reinstalled", #""lost":1"#))
        // The new install pulls from 0 again: its cursor history starts over, and does not go backwards.
        fixture.events.append(fixture.event(41, "b", "cursor.moved", #""from":0,"to":1,"pass":1"#))
        try expectOnlyFailing(fixture, "no-lost-edit", saying: "the app was reinstalled at 40s before any pass sent it")
    }

    /// The launcher's record of each edit it asked for is the witness: an op erased from the ledger AND from the
    /// device's events is still missed.
    @Test func anOpErasedFromLedgerAndDeviceEventsIsStillMissed() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(30, "launcher", "scenario.action",
                                            #""action":"edit","target":"b","draft":"d2","op":"create","key":"b-x-1""#))
        try expectOnlyFailing(fixture, "no-lost-edit",
                              saying: "op b-x-1 (create d2) saved on b at 30s is not in its ledger")
    }

    @Test func aPendingOpAfterQuiesceBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        fixture.deviceOps["b"] = [.init(key: "k3", status: "confirmationDelayed", error: "no reply")]
        try expectFailing(fixture, "no-lost-edit", saying: "still confirmationDelayed after quiesce")
    }

    @Test func aCompletedOpTheServerNeverAppliedBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        fixture.deviceOps["b"] = [.init(key: "k4", status: "completed", error: "")]
        let result = try onlyFailing(fixture, "no-lost-edit")
        #expect(result.detail.contains("op k4 (create d1) saved on b") && result.detail.contains("is completed on the "
            + "device but the server never applied it"), "\(result.detail)")
    }

    @Test func needsAttentionHoldsOnlyForARefusalTheServerRecorded() throws {
        var fixture = try RunFixture()
        fixture.deviceOps["b"] = [.init(key: "k5", status: "needsAttention", error: "rejected: too large")]
        fixture.keyRecords["k5"] = ("b", "rejected", "too large")
        let held = try #require(try fixture.report().invariant("no-lost-edit"))
        #expect(held.held, "\(held.detail)")
        #expect(held.detail.contains("1 need attention"))
        // Without the server's record, "needs attention" is giving up on an op whose outcome was only unknown.
        fixture.keyRecords = [:]
        fixture.deviceOps["b"] = [.init(key: "k5", status: "needsAttention", error: "not confirmed")]
        let given = try onlyFailing(fixture, "no-lost-edit")
        #expect(given.detail.contains("needs attention (\"not confirmed\") but the server never refused it"),
                "\(given.detail)")
        // Without a reason at all.
        fixture.deviceOps["b"] = [.init(key: "k5", status: "needsAttention", error: "")]
        #expect(try fixture.report().invariant("no-lost-edit")?.detail.contains("without a reason") == true)
    }

    @Test func needsAttentionOnAnOpTheServerAppliedBreaksNoLostEdit() throws {
        var fixture = try RunFixture()
        fixture.deviceOps["a"] = [.init(key: "k1", status: "needsAttention", error: "not confirmed")]
        try expectOnlyFailing(fixture, "no-lost-edit",
                              saying: "needs attention (\"not confirmed\") although the server applied it as seq 1")
    }

    @Test func givingUpAfterTheAttemptCapOnRetryLaterHolds() throws {
        var fixture = try RunFixture()
        fixture.deviceOps["b"] = [.init(key: "k6", status: "needsAttention", error: "gave up after 10 attempts: busy",
                                        attempts: 10)]
        fixture.events.append(fixture.event(16, "server", "op.retryLater", #""device":"b","key":"k6","reason":"busy""#))
        #expect(try fixture.report().invariant("no-lost-edit")?.held == true)
        // Fewer attempts than the device's cap: it gave up early.
        fixture.deviceOps["b"] = [.init(key: "k6", status: "needsAttention", error: "gave up after 2 attempts: busy",
                                        attempts: 2)]
        #expect(try fixture.report().invariant("no-lost-edit")?.held == false)
    }

    // MARK: convergence

    @Test func aReplicaThatDiffersInItsBodyBreaksConvergence() throws {
        var fixture = try RunFixture()
        fixture.deviceDrafts["b"] = [("d1", "T", "stale body", 1)]
        fixture.shadows["b"] = [("d1", "T", "B", 1)]
        try expectOnlyFailing(fixture, "convergence",
                              saying: "b: 1 of 1 drafts differ from the server; first: draft d1: body differs")
    }

    // MARK: cursor-safety

    /// The cursor committed before its page: the cursor says 2, the shadow lacks change 2.
    @Test func aCursorPastAChangeItsShadowLacksBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        fixture.changes.append(.init(seq: 2, draft: "d2", key: "k2", origin: "a", title: "U", body: "V"))
        fixture.serverDrafts.append(("d2", "U", "V", 1))
        fixture.deviceOps["a"]!.append(.init(key: "k2", status: "completed", error: "", draft: "d2"))
        fixture.deviceDrafts = ["a": [("d1", "T", "B", 1), ("d2", "U", "V", 1)],
            "b": [("d1", "T", "B", 1), ("d2", "U", "V", 1)]]
        fixture.shadows["b"] = [("d1", "T", "B", 1)]
        fixture.moveCursors(to: 2)
        try expectOnlyFailing(fixture, "cursor-safety",
                              saying: "b at the end: cursor 2, but its shadow holds nothing of draft d2 where the "
                              + "server's changes up to 2 give v1 (change seq 2, key k2): the cursor passed a change "
                              + "that was not durably applied")
    }

    @Test func aRemovedShadowRowBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        fixture.shadows["b"] = []
        try expectOnlyFailing(fixture, "cursor-safety", saying: "holds nothing of draft d1")
    }

    /// A shadow row at the server's version whose body is not the server's: the message names the field, where
    /// "holds v1 … give v1" alone would read as no difference at all.
    @Test func aShadowRowWithTheRightVersionButAnotherBodyIsNamedByItsField() throws {
        var fixture = try RunFixture()
        fixture.shadows["b"] = [("d1", "T", "stale", 1)]
        try expectOnlyFailing(fixture, "cursor-safety",
                              saying: "its shadow holds v1 body \"stale\" of draft d1 where the server's changes "
                              + "up to 1 give v1 body \"B\"")
    }

    @Test func aCursorThatMovesBackBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(20, "b", "cursor.moved", #""from":0,"to":0,"pass":2"#))
        try expectOnlyFailing(fixture, "cursor-safety", saying: "it went backwards")
    }

    @Test func aCursorBeyondTheHeadBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        fixture.cursors["b"] = 5
        try expectFailing(fixture, "cursor-safety", saying: "cursor 5 is beyond the server's head 1")
    }

    @Test func aFailedCheckAfterARestartBreaksCursorSafety() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(20, "launcher", "state.checked",
                                            #""target":"b","held":false,"cursor":1,"detail":"cursor 1,"#
                                                + #" but its shadow holds nothing of draft d1""#))
        try expectOnlyFailing(fixture, "cursor-safety",
                              saying: "b after its restart at 20s: cursor 1, but its shadow holds nothing")
    }

    // MARK: hints-are-references

    @Test(arguments: [
        ("b", "hint.received", #""hint":"h-2","head":1,"keys":["account","body","head","hint"]"#,
            "b received hint h-2"),
        ("b", "hint.malformed", #""reason":"unknown key","keys":["account","head","hint","title"]"#, "b refused hint"),
        ("broker", "hint.delivered",
            #""hint":"h-3","device":"b","head":1,"keys":["account","body","head","hint","title"]"#,
         "the broker sent hint h-3"),
    ])
    func aHintCarryingDataBreaksHintsAreReferences(proc: String, type: String, fields: String, words: String) throws {
        var fixture = try RunFixture()
        if type == "hint.delivered" {
            fixture.events.append(fixture.event(21, "broker", "hint.accepted",
                                                #""hint":"h-3","device":"b","account":"acme","head":1,"origin":"a","#
                                                    + #""seqs":[1]"#))
            fixture.brokerCounters = ["accepted": 2, "delivered": 2, "held": 0]
        }
        fixture.events.append(fixture.event(21, proc, type, fields))
        let report = try fixture.report()
        let result = try #require(report.invariant("hints-are-references"))
        #expect(!result.held)
        #expect(result.detail.contains(words) && result.detail.contains("data:"), "\(result.detail)")
    }

    // MARK: hints-accounted

    @Test func aHintWithoutAFateIsHeldAndTheBrokerMustSaySo() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(30, "broker", "hint.accepted",
            #""hint":"h-2","device":"a","account":"acme","head":1,"origin":"b","seqs":[1]"#))
        try expectOnlyFailing(fixture, "hints-accounted",
                              saying: "the broker counts 0 hints held but its events show 1")
        fixture.brokerHeld = 1
        #expect(try fixture.report().invariant("hints-accounted")?.held == true)
    }

    /// A hint the broker dropped without writing an event: its counters say dropped, its events say held.
    @Test func aSilentDropIsCaughtByTheBrokersOwnCounters() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(30, "broker", "hint.accepted",
            #""hint":"h-2","device":"a","account":"acme","head":1,"origin":"b","seqs":[1]"#))
        fixture.brokerCounters = ["accepted": 2, "delivered": 1, "dropped": 1, "held": 0]
        let result = try onlyFailing(fixture, "hints-accounted")
        #expect(result.violations.contains { $0.text.contains("counts 1 hints dropped but its events show 0: 1 dropped "
            + "without an event") }, "\(result.violations)")
    }

    @Test func aHintWithTwoFatesBreaksHintsAccounted() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(31, "broker", "hint.dropped",
            #""hint":"h-1","device":"b","reason":"chaos-loss""#))
        try expectFailing(fixture, "hints-accounted", saying: "hint h-1 has a second fate (hint.dropped) at 31s")
    }

    @Test func hintsHeldByAKilledBrokerAreCountedAsLostWithIt() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(32, "broker", "hint.accepted",
            #""hint":"h-2","device":"a","account":"acme","head":1,"origin":"b","seqs":[1]"#))
        fixture.events.append(fixture.event(33, "broker", "process.started", #""role":"broker""#))
        fixture.brokerCounters = [:]
        let report = try fixture.report()
        let result = try #require(report.invariant("hints-accounted"))
        #expect(result.held, "\(result.detail)")
        #expect(report.json["hints"]?["lostWithKilledBroker"]?.intValue == 1)
    }

    // MARK: open-reaches-head

    /// Trust the push: the app opens, the pass it starts pulls nothing, the user sees old data.
    @Test func anOpenThatDoesNotReachTheHeadBreaksOpenReachesHead() throws {
        var fixture = try RunFixture()
        fixture.events += fixture.emptyPass(40, "b", pass: 2, trigger: "foreground", end: 41, cursor: 0)
        try expectOnlyFailing(fixture, "open-reaches-head",
                              saying: "b opened at 40s (foreground): the server's head was 1, the pass the open "
                                  + "started "
                              + "ended at cursor 0: the user saw data 1 change old")
        // The same open while offline is excused, not failed.
        fixture.events.removeLast(2)
        fixture.events += fixture.emptyPass(40, "b", pass: 2, trigger: "foreground", end: 41, cursor: 0,
                                            outcome: "offline")
        let excused = try #require(try fixture.report().invariant("open-reaches-head"))
        #expect(excused.held && excused.detail.contains("1 excused"), "\(excused.detail)")
    }

    // MARK: quiesce-settles

    @Test func aQuiesceThatTimesOutFailsTheRun() throws {
        var fixture = try RunFixture()
        fixture.events.insert(fixture.event(0, "launcher", "process.started", #""role":"launcher""#), at: 0)
        fixture.events.append(fixture.event(50, "launcher", "quiesce.timeout",
                                            #""rounds":40,"stuck":["b: 2 pending ops, cursor 0 of 1"]"#))
        try expectOnlyFailing(fixture, "quiesce-settles",
                              saying: "quiesce did not settle after 40 rounds: b: 2 pending ops, cursor 0 of 1")
    }

    @Test func healPassesAreCountedApartFromTheScenarios() throws {
        var fixture = try RunFixture()
        fixture.events += fixture.emptyPass(30, "b", pass: 2, trigger: "foreground", end: 31, durationSec: "1")
        fixture.events.append(fixture.event(60, "launcher", "phase", #""name":"heal""#))
        fixture.events += fixture.emptyPass(61, "b", pass: 3, trigger: "connectivity", end: 62, durationSec: "1")
        let report = try fixture.report()
        let json = report.json
        #expect(json["passes"]?["total"]?.intValue == 3)
        #expect(json["passes"]?["byTrigger"]?["connectivity"] == nil)
        #expect(json["passes"]?["heal"]?["byTrigger"]?["connectivity"]?.intValue == 1)
        // The scenario's pass that did nothing is counted; heal's is not.
        #expect(json["passes"]?["idleByDevice"]?["b"]?.intValue == 1)
        #expect(json["passes"]?["idleByDevice"]?["a"] == nil)
        #expect(report.markdown.contains("| b | ios | 1 | 0 | 1 | 2 | 1 |"), "\(report.markdown)")
    }

    @Test func reportsAreWrittenInThreeForms() throws {
        let fixture = try RunFixture()
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

/// Expectations: a lesson passes when exactly the predicted checks fail for exactly the predicted subjects.
@Suite struct ExpectationTests {
    static func result(_ name: String, _ violations: [Violation]) -> InvariantResult {
        InvariantResult(name, violations, held: "fine")
    }

    static let broken = Violation(device: "naive", account: "acme", "op k1 saved on naive was lost")
    static let server = Violation(device: nil, account: "acme", "account acme has 2 changes but saved 1")

    @Test func exactlyTheExpectedFailuresMeetTheExpectation() {
        let expectation = Expectation(failures: ["naive": ["no-lost-edit"]])
        let outcome = expectation.evaluate([Self.result("no-lost-edit", [Self.broken]), Self.result("convergence", [])])
        #expect(outcome.met)
        #expect(outcome.items == [.init(subject: "naive", check: "no-lost-edit", seen: true,
            example: Self.broken.text)])
    }

    @Test func anExpectedFailureThatDoesNotHappenIsNotMet() {
        let expectation = Expectation(failures: ["naive": ["no-lost-edit"]])
        let outcome = expectation.evaluate([Self.result("no-lost-edit", [])])
        #expect(!outcome.met)
        #expect(outcome.problems == ["expected no-lost-edit to fail for naive, but it held there"])
    }

    @Test func aFailureElsewhereIsNotMet() {
        let expectation = Expectation(failures: ["naive": ["no-lost-edit"]])
        let other = Violation(device: "correct", account: "acme", "op k2 saved on correct was lost")
        let outcome = expectation.evaluate([Self.result("no-lost-edit", [Self.broken, other]),
                                            Self.result("exactly-once", [Self.server])])
        #expect(!outcome.met)
        #expect(outcome.problems.count == 2)
        #expect(outcome.problems[0].contains("no-lost-edit failed where it was expected to hold: op k2 saved on "
            + "correct"))
        #expect(outcome.problems[1].contains("exactly-once failed"))
    }

    @Test func anAccountSubjectCoversItsDevicesAndItsOwnViolations() {
        let expectation = Expectation(failures: ["acme": ["no-lost-edit", "exactly-once"]])
        let outcome = expectation.evaluate([Self.result("no-lost-edit", [Self.broken]),
                                            Self.result("exactly-once", [Self.server])])
        #expect(outcome.met)
    }

    @Test func expectNamesAreCheckedAgainstTheTopology() throws {
        let accounts = #"accounts: [{ id: "acme", devices: [{ id: "a", platform: "web" }] }]"#
        let good = try Topology.parse("{ \(accounts), expect: { a: [\"no-lost-edit\"], acme: [\"data-age-at-open\"] } "
            + "}",
                                      file: "t.json5", defaultName: "t")
        #expect(good.expect?.failures == ["a": ["no-lost-edit"], "acme": ["data-age-at-open"]])
        for (text, words) in [("{ zed: [\"no-lost-edit\"] }", "not a device or an account"),
                              ("{ a: [\"no-lost-edits\"] }", "expected check names among")] {
            do {
                _ = try Topology.parse("{ \(accounts), expect: \(text) }", file: "t.json5", defaultName: "t")
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.message.contains(words), "\(error.message)")
                #expect(error.key.hasPrefix("expect."))
            }
        }
    }
}
