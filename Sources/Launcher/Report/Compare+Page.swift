import Foundation
import Markup

/// compare.html as a teaching page: which run is real and which simulated, the checks that differ first (the
/// expectation read the right way), both timelines one above the other on one clock, then every figure.
extension Compare {
    /// Both runs' timeline sections, drawn to the end of the longer run so one moment sits at one x on both.
    static func timelines(folderA: String, folderB: String) -> [String] {
        guard let a = try? Report.make(folder: RunFolder(root: folderA)),
              let b = try? Report.make(folder: RunFolder(root: folderB)) else { return [] }
        let end = max(a.timelineEnd, b.timelineEnd)
        // The page's script zooms the first; the second keeps its own id so the ids stay unique.
        let second = b.timelineHTML(clockEnd: end)
            .replacingOccurrences(of: "id=\"timeline\"", with: "id=\"timeline-b\"")
            .replacingOccurrences(of: "id=\"tl-in\"", with: "id=\"tl-in-b\"")
            .replacingOccurrences(of: "id=\"tl-out\"", with: "id=\"tl-out-b\"")
            .replacingOccurrences(of: "id=\"tl-reset\"", with: "id=\"tl-reset-b\"")
            .replacingOccurrences(of: "id=\"timeline-picked\"", with: "id=\"timeline-picked-b\"")
        return [a.timelineHTML(clockEnd: end), second]
    }

    /// The checks (invariants, product checks, expectation) whose result differs between the runs.
    var differingChecks: [Row] { rows.filter { Self.isCheck($0.name) && $0.changed && !$0.difference.isEmpty } }

    var html: String {
        var s = """
            <!doctype html><html><head><meta charset="utf-8">
            <title>SyncLab: \(Markup.text(nameA)) vs \(Markup.text(nameB))</title>
            <style>body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
            table{border-collapse:collapse}
            td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;font-size:13px}th{background:#f3f3f3}
            tr.changed td{background:#fff9db}td.bad{color:#c92a2a;font-weight:600}
            td.good{color:#1a7f37}.kind{font-weight:600}\(Timeline.style)</style></head><body>
            <h1>Two runs side by side</h1>
            <p>A: <code>\(Markup.text(nameA))</code> — <span class="kind run-kind-a">\(Markup.text(kindA))</span><br>
            B: <code>\(Markup.text(nameB))</code> — <span class="kind run-kind-b">\(Markup.text(kindB))</span><br>
            Rows that differ are yellow.\(kindA != kindB ? " One run is real, one simulated: times and real-time "
                + "figures are not comparable, verdicts and counts are." : "")</p>

            """
        let differing = differingChecks
        s += "<h2>Checks that differ</h2>\n"
        if differing.isEmpty {
            s += "<p>Every check and the expectation came out the same in both runs.</p>\n"
        } else {
            s += Table(["check", "A", "B"], rows: differing.map { row in
                Table.Row([Table.Cell(row.name), Self.cell(row.a), Self.cell(row.b)], htmlClass: "changed")
            }, htmlClass: "differing").html
        }
        if timelines.count == 2 {
            s += "<h2>A: \(Markup.text(nameA))</h2>\n" + timelines[0]
            s += "<h2>B: \(Markup.text(nameB))</h2>\n" + timelines[1]
        }
        s += "<h2>Every figure</h2>\n" + Table(["figure", "A", "B", "B − A"], rows: rows.map { row in
            Table.Row([Table.Cell(row.name), Self.cell(row.a), Self.cell(row.b), Table.Cell(row.difference)],
                      htmlClass: row.changed && !row.difference.isEmpty ? "changed" : nil)
        }).html
        return s + (timelines.isEmpty ? "" : Timeline.script) + "</body></html>\n"
    }

    /// A result's cell, marked bad or good when its words are a verdict.
    private static func cell(_ v: String) -> Table.Cell {
        let bad = ["FAILED", "fail", "NOT met", "held: NOT as expected"].contains(v)
        let good = ["held", "pass", "met", "failed, as expected"].contains(v)
        return Table.Cell(v, mark: bad ? .bad : good ? .good : nil)
    }
}
