import Foundation
import LabTestSupport
import Testing

@testable import Launcher

/// report.html in a real browser: the crash topology is run, its report opened in headless Chromium (Debian's
/// `chromium`, which scripts/test installs when missing). The DOM after the scripts ran must be marked ready with no
/// script error, hold a lane per process and a down band for every kill; the screenshot must not be blank.
@Suite(.serialized) struct ReportBrowserTests {
    static var chromium: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
            for name in ["chromium", "chromium-browser"]
            where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
                return "\(dir)/\(name)"
            }
        }
        return nil
    }

    /// Runs headless Chromium with `arguments` and the page, bounded by `limit` seconds; returns its standard output.
    static func browse(_ chromium: String, _ arguments: [String], page: String, limit: Double = 60) throws -> String {
        let home = TempFolder()
        let browser = try ChildProcess(chromium, [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(home.file("profile"))",
        ] + arguments + ["file://\(page)"], stdout: home.file("out.txt"), stderr: home.file("err.txt"))
        browser.finish(within: limit)
        return browser.log
    }

    /// The sizes of two screenshots taken the same way, of an empty page and of `page`: a page that drew anything
    /// is many times the empty one.
    static func screenshotBytes(_ chromium: String, of page: String) throws -> (blank: Int, page: Int) {
        let folder = TempFolder()
        let empty = folder.file("empty.html")
        try "<!doctype html><html><body></body></html>\n".write(toFile: empty, atomically: true, encoding: .utf8)
        func shot(_ page: String, _ name: String) throws -> Int {
            let png = folder.file(name)
            _ = try browse(chromium, ["--screenshot=\(png)", "--window-size=1280,2400"], page: page)
            return ((try? FileManager.default.attributesOfItem(atPath: png)[.size]) as? Int) ?? 0
        }
        return (try shot(empty, "empty.png"), try shot(page, "page.png"))
    }

    static func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// `synclab explain` and `synclab compare` on the real run folder.
    static func explainAndCompare(_ folder: String) throws {
        let events = (try? String(contentsOfFile: "\(folder)/events.jsonl", encoding: .utf8)) ?? ""
        let saved = events.split(separator: "\n").first { $0.contains("\"type\":\"op.saved\"") }
        let key = saved.flatMap { line in
            line.range(of: "\"key\":\"").map { String(line[$0.upperBound...].prefix { $0 != "\"" }) }
        }
        let op = try #require(key, "the crash run saved no op")
        let (status, story) = try EndToEndTests.synclab(["explain", folder, op], limit: 60)
        #expect(status == 0, "\(story)")
        #expect(story.contains("saved op \(op)"))
        #expect(story.contains("server applied it as seq"))
        #expect(story.contains("applied it (seq"), "no other device applied \(op):\n\(story)")
        let (missing, _) = try EndToEndTests.synclab(["explain", folder, "no-such-key"], limit: 60)
        #expect(missing == 2)
        let page = "\(folder)/compare-self.html"
        let (same, table) = try EndToEndTests.synclab(["compare", folder, folder, "--out", page], limit: 60)
        #expect(same == 0, "\(table)")
        #expect(table.contains("verdict") && table.contains("hints.accepted"))
        #expect(!table.contains("\n* "), "a run differs from itself:\n\(table)")
        #expect(FileManager.default.fileExists(atPath: page))
    }

    /// The x and width attributes of the first element whose attributes start with `prefix`.
    static func firstRect(_ prefix: String, in dom: String) -> (x: Double, width: Double)? {
        guard let start = dom.range(of: prefix) else { return nil }
        let tag = dom[start.upperBound...].prefix { $0 != ">" }
        func attribute(_ name: String) -> Double? {
            guard let r = tag.range(of: " \(name)=\"") else { return nil }
            return Double(tag[r.upperBound...].prefix { $0 != "\"" })
        }
        guard let x = attribute("x"), let width = attribute("width") else { return nil }
        return (x, width)
    }

    @Test func theCrashReportLoadsInChromiumWithALanePerProcessAndADownBandPerKill() throws {
        guard let chromium = Self.chromium else {
            let why = Comment(rawValue: "chromium is not installed: scripts/test installs it (apt-get install "
                + "chromium); this test renders report.html in it and cannot be skipped")
            Issue.record(why)
            return
        }
        let run = try EndToEndTests.run("crash")
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        try Self.explainAndCompare(run.folder)
        let page = "\(run.folder)/report.html"
        #expect(FileManager.default.fileExists(atPath: page))

        // The DOM after the page's scripts ran.
        let dom = try Self.browse(chromium, ["--dump-dom", "--virtual-time-budget=5000"], page: page)
        #expect(
            dom.contains("<svg id=\"timeline\""), "no timeline in the DOM Chromium dumped (\(dom.count) characters)")
        #expect(dom.contains("data-timeline-ready=\"1\""), "the timeline's script did not finish")
        // The page's window.onerror writes the attribute (its own text names it in single quotes).
        let scriptError = dom.components(separatedBy: "data-script-error=\"").dropFirst().first?.prefix(200) ?? ""
        #expect(
            !dom.contains("data-script-error=\""),
            "a script error: \(scriptError)"
        )
        // server, broker, a1, i1, w1.
        #expect(Self.count("class=\"lane\"", in: dom) == 5)
        for lane in ["server", "broker", "a1", "i1", "w1"] {
            #expect(dom.contains("<g class=\"lane\" data-lane=\"\(lane)\""), "no lane for \(lane)")
        }
        // Every fault the scenario caused (topologies/crash.json5): the server paused once and down twice (a kill
        // and a crash point), the broker killed once, a1 crashed once, i1 killed once, w1 paused once.
        #expect(Self.count("class=\"band band-down\" data-lane=\"server\"", in: dom) == 2)
        #expect(Self.count("class=\"band band-paused\" data-lane=\"server\"", in: dom) == 1)
        #expect(Self.count("class=\"band band-down\" data-lane=\"broker\"", in: dom) == 1)
        #expect(Self.count("class=\"band band-down\" data-lane=\"a1\"", in: dom) == 1)
        #expect(Self.count("class=\"band band-down\" data-lane=\"i1\"", in: dom) == 1)
        #expect(Self.count("class=\"band band-paused\" data-lane=\"w1\"", in: dom) == 1)
        #expect(!dom.contains("class=\"band band-down\" data-lane=\"w1\""))

        // Opened zoomed on 5m to 15m (report.html#t=300,900), the script moves the first server outage (9m–11m): it
        // starts further right and is wider than on the whole run.
        let zoomed = try Self.browse(chromium, ["--dump-dom", "--virtual-time-budget=5000"], page: page + "#t=300,900")
        #expect(zoomed.contains("data-view=\"300,900\""), "the page did not open zoomed")
        let whole = Self.firstRect("class=\"band band-down\" data-lane=\"server\"", in: dom)
        let close = Self.firstRect("class=\"band band-down\" data-lane=\"server\"", in: zoomed)
        #expect(whole != nil && close != nil)
        if let whole, let close {
            #expect(close.x > whole.x && close.width > 4 * whole.width, "whole run \(whole), zoomed \(close)")
        }

        // A screenshot of the report against one of an empty page taken the same way.
        let (blank, report) = try Self.screenshotBytes(chromium, of: page)
        #expect(blank > 0, "Chromium wrote no screenshot of an empty page")
        #expect(
            report > 20 * max(blank, 1),
            "the report's screenshot (\(report) bytes) is not much more than a blank page's (\(blank) bytes)")
    }

    /// The checks above can fail: a page whose script throws is caught by the report's window.onerror, and its
    /// timeline is then never marked ready.
    @Test func aScriptErrorInTheReportIsCaughtAndTheTimelineIsNotMarkedReady() throws {
        guard let chromium = Self.chromium else {
            let why: Comment = "chromium is not installed: scripts/test installs it (apt-get install chromium)"
            Issue.record(why)
            return
        }
        let fixture = try RunFixture()
        let html = try fixture.report().html
        let good = fixture.folder.path("good.html")
        let broken = fixture.folder.path("broken.html")
        try html.write(toFile: good, atomically: true, encoding: .utf8)
        // A script that throws before the timeline's own script runs.
        try html.replacingOccurrences(
            of: "<script>\n(function () {", with: "<script>noSuchFunction();</script><script>\n(function () {"
        )
        .replacingOccurrences(
            of: "var svg = document.getElementById('timeline');",
            with: "var svg = document.getElementById('timeline'); svg.noSuch();"
        )
        .write(toFile: broken, atomically: true, encoding: .utf8)
        let fine = try Self.browse(chromium, ["--dump-dom", "--virtual-time-budget=3000"], page: good)
        #expect(fine.contains("data-timeline-ready=\"1\"") && !fine.contains("data-script-error=\""))
        let dom = try Self.browse(chromium, ["--dump-dom", "--virtual-time-budget=3000"], page: broken)
        #expect(dom.contains("data-script-error=\""), "window.onerror did not record the error")
        let recorded = dom.components(separatedBy: "data-script-error=\"").dropFirst().first?.prefix(while: {
            $0 != "\""
        })
        #expect(
            recorded?.contains("noSuch") == true, "the recorded error does not name the failing call: \(recorded ?? "")"
        )
        #expect(!dom.contains("data-timeline-ready=\"1\""))
    }
}
