import Foundation
import Testing

@testable import Launcher

/// report.html's timeline, plots and failing-check links, and report.md's reasons, on a hand-made run folder.
struct ReportTimelineTests {
    @Test func aGoodRunsPageHasTheTimelineAndThePlotsAndNoFailedChecks() throws {
        let fixture = try RunFixture()
        let html = try fixture.report().html
        #expect(html.contains("<svg id=\"timeline\""))
        #expect(html.components(separatedBy: "class=\"lane\"").count - 1 == 4)
        #expect(html.contains("class=\"plot plot-cdf\""))
        #expect(html.contains("class=\"plot plot-passes\""))
        #expect(html.contains("data-timeline-ready"))
        #expect(!html.contains("Failed checks"))
        #expect(!html.contains("<script src"))
        #expect(!html.contains("<link") && !html.contains("src=\"http"))
    }

    @Test func aFailedChecksCounterExampleIsRingedAndLinkedToTheTimeline() throws {
        var fixture = try RunFixture()
        // The server applied k1 twice: exactly-once fails on key k1.
        fixture.changes.append(.init(seq: 2, draft: "d1", key: "k1", origin: "a", action: "update", version: 2))
        let report = try fixture.report()
        let result = try #require(report.invariant("exactly-once"))
        #expect(!result.held)
        #expect(result.focus.isEmpty)
        #expect(report.focus(of: result) == ["k1"])
        let html = report.html
        #expect(html.contains("Failed checks"))
        #expect(html.contains("data-focus-t=\"2\""))
        #expect(html.contains("mark mark-saved focus"))
        // A check's own focus wins over the words of its detail.
        var named = result
        named.focus = ["b"]
        #expect(report.focus(of: named) == ["b"])
    }

    @Test func opsThatNeedAttentionAndDeadHintsAreListedWithTheirReasons() throws {
        var fixture = try RunFixture()
        fixture.deviceOps["a"]!.append(.init(key: "k9", status: "needsAttention",
            error: "rejected: draft d9 is too long"))
        fixture.events.insert(
            fixture.event(
                4, "broker", "hint.accepted", #""hint":"h-2","device":"a","account":"acme","head":1,"seqs":[1]"#), at: 4
        )
        fixture.events.insert(
            fixture.event(5, "broker", "hint.throttled", #""hint":"h-2","device":"a","reason":"background-budget""#),
            at: 5)
        let report = try fixture.report()
        let md = report.markdown
        #expect(md.contains("| a | k9 | 1 | rejected: draft d9 is too long |"))
        #expect(md.contains("| throttled | background-budget | 1 |"))
        #expect(report.summary.contains("hints that died: 1 throttled (background-budget)"))
        // A hint the broker held when it was killed is lost with it.
        fixture.events.append(
            fixture.event(15, "broker", "hint.accepted",
                #""hint":"h-3","device":"a","account":"acme","head":1,"seqs":[1]"#))
        fixture.events.append(fixture.event(16, "broker", "process.started", #""role":"broker""#))
        let killed = try fixture.report()
        #expect(killed.markdown.contains("| lost | held by the broker when it was killed | 1 |"))
        #expect(killed.summary.contains("1 lost (held by the broker when it was killed)"))
        let plain = try RunFixture()
        let clean = try plain.report().markdown
        #expect(!clean.contains("Ops that need attention") && !clean.contains("Hints that died"))
    }

    @Test func aLongRunsLineageListIsFolded() throws {
        var fixture = try RunFixture()
        #expect(!(try fixture.report().html.contains("<details>")))
        for i in 2...30 {
            fixture.events.append(
                fixture.event(20 + i, "a", "op.saved", "\"key\":\"k\(i)\",\"draft\":\"d1\",\"action\":\"update\""))
            fixture.deviceOps["a"]!.append(.init(key: "k\(i)", status: "needsAttention", error: "test"))
        }
        let html = try fixture.report().html
        #expect(html.contains("<details><summary>30 edits (unfold)</summary><ul>"))
    }
}
