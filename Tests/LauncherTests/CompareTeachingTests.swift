import Foundation
import LabTestSupport
import SyncProtocol
import Testing
@testable import Launcher

/// `synclab compare` as a teaching page: a lesson beside the same lesson with its broken half fixed. The checks
/// that differ come first, the expectation reads the right way ("failed, as expected"), each run says whether it was
/// real or simulated, and both timelines are drawn one above the other on one clock.
@Suite(.serialized) struct CompareTeachingTests {
    @Test func aLessonBesideItsFixReadsTheRightWay() throws {
        let home = TempFolder()
        let lesson = LessonTests.lessons.appendingPathComponent("web-beacon.json5").path
        let fixed = home.file("fixed.json5")
        let text = try String(contentsOfFile: lesson, encoding: .utf8)
        let patched = text.replacingOccurrences(of: "device: { unloadFlush: \"task\" }",
                                                with: "device: { unloadFlush: \"beacon\" }")
        #expect(patched != text)
        try patched.write(toFile: fixed, atomically: true, encoding: .utf8)
        let (a, b, page) = (home.file("a"), home.file("b"), home.file("compare.html"))
        _ = try EndToEndTests.synclab(["sim", lesson, "--out", a], limit: 120)
        _ = try EndToEndTests.synclab(["sim", fixed, "--out", b], limit: 120)
        let (status, table) = try EndToEndTests.synclab(["compare", a, b, "--out", page], limit: 60)
        #expect(status == 0, "\(table)")
        let lines = table.split(separator: "\n").map(String.init)
        // The verdict and the kind of run first; the checks before every figure.
        #expect(lines.dropFirst().first?.contains("run") == true && lines[1].contains("simulation (virtual clock)"))
        let expected = try #require(lines.first { $0.contains("expected: unsynced-at-24h fails for task") })
        #expect(expected.contains("failed, as expected") && expected.contains("held: NOT as expected"))
        #expect(lines.contains { $0.hasPrefix("* expectation.met") && $0.contains("NOT met") })
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let differing = try #require(html.components(separatedBy: "<h2>Checks that differ</h2>").dropFirst().first?
            .components(separatedBy: "</table>").first)
        #expect(differing.contains("<td>check unsynced-at-24h</td><td class=\"bad\">FAILED</td><td class=\"good\">"))
        #expect(!differing.contains("hints.accepted"))
        #expect(html.contains("<svg id=\"timeline\"") && html.contains("<svg id=\"timeline-b\""))
        // One clock: both timelines run to the same end.
        let ends = html.components(separatedBy: "data-t1=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(ends.count == 2 && ends[0] == ends[1], "\(ends)")
        #expect(html.contains("run-kind-a\">simulation (virtual clock)"))

        // In real headless Chromium: the page's script runs without error, and its screenshot is not blank.
        guard let chromium = ReportBrowserTests.chromium else {
            let why: Comment = "chromium is not installed: scripts/test installs it (apt-get install chromium)"
            Issue.record(why)
            return
        }
        let dom = try ReportBrowserTests.browse(chromium, ["--dump-dom", "--virtual-time-budget=5000"], page: page)
        #expect(dom.contains("data-timeline-ready=\"1\"") && !dom.contains("data-script-error=\""))
        #expect(dom.contains("<svg id=\"timeline-b\""))
        let (blank, shot) = (home.file("empty.html"), home.file("compare.png"))
        try "<!doctype html><html><body></body></html>\n".write(toFile: blank, atomically: true, encoding: .utf8)
        func size(_ page: String, _ png: String) throws -> Int {
            _ = try ReportBrowserTests.browse(chromium, ["--screenshot=\(png)", "--window-size=1280,2400"], page: page)
            return ((try? FileManager.default.attributesOfItem(atPath: png)[.size]) as? Int) ?? 0
        }
        let empty = try size(blank, home.file("empty.png"))
        let compared = try size(page, shot)
        #expect(empty > 0 && compared > 20 * empty, "compare \(compared) bytes, blank \(empty)")
    }

    @Test func aRealRunBesideASimulationIsMarked() {
        func report(_ simulated: Bool) -> JSONValue {
            try! JSONValue.parse("{\"verdict\":\"pass\",\"simulated\":\(simulated),\"seed\":1}")
        }
        let compare = Compare(nameA: "real", a: report(false), nameB: "sim", b: report(true))
        #expect(compare.kindA == "real processes" && compare.kindB == "simulation (virtual clock)")
        #expect(compare.rows.first { $0.name == "run" }?.difference == "differs")
        #expect(compare.html.contains("One run is real, one simulated"))
        let same = Compare(nameA: "a", a: report(true), nameB: "b", b: report(true))
        #expect(!same.html.contains("One run is real, one simulated"))
    }
}
