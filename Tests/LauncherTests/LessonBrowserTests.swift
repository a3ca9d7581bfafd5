import Foundation
import LabTestSupport
import SyncProtocol
import Testing
@testable import Launcher

/// A lesson's page in real headless Chromium: after its scripts ran, the broken half's switch events are flags on
/// its lane (as many as report.json counts), its lane is ringed for the failed product check, the correct half has
/// neither, and the screenshot is not blank.
@Suite(.serialized) struct LessonBrowserTests {
    @Test func aLessonsPageShowsTheBrokenHalfsSwitchEventsInChromium() throws {
        guard let chromium = ReportBrowserTests.chromium else {
            let why: Comment = "chromium is not installed: scripts/test installs it (apt-get install chromium)"
            Issue.record(why)
            return
        }
        let r = try SwitchMarksTests.render("ios-expiration-handler")
        let page = "\(r.folder)/report.html"
        let dom = try ReportBrowserTests.browse(chromium, ["--dump-dom", "--virtual-time-budget=5000"], page: page)
        #expect(dom.contains("data-timeline-ready=\"1\"") && !dom.contains("data-script-error=\""))
        let counts = r.json["switchEvents"]?["killed"]?.objectValue ?? []
        let shrunk = counts.first { $0.0 == "budget.shrunk" }?.1.intValue ?? 0
        #expect(shrunk > 0, "killed's budget never shrank: \(counts)")
        let flags = SwitchMarksTests.flags(on: "killed", in: dom)
        #expect(flags.filter { $0 == "budget.shrunk" }.count == shrunk)
        #expect(!SwitchMarksTests.flags(on: "handled", in: dom).contains("budget.shrunk"))
        #expect(dom.contains("<g class=\"lane\" data-lane=\"killed\"><rect") && dom.contains("lane-ring"))
        #expect(dom.contains("data-check=\"data-age-at-open\""))
        // The iOS budget: a line on the lane whose budget shrank, none on the lane whose never did.
        #expect(dom.contains("<polyline class=\"budget\" data-lane=\"killed\""))
        #expect(!dom.contains("<polyline class=\"budget\" data-lane=\"handled\""))

        let (blank, lesson) = try ReportBrowserTests.screenshotBytes(chromium, of: page)
        #expect(blank > 0 && lesson > 20 * blank, "lesson \(lesson) bytes, blank \(blank)")
    }
}
