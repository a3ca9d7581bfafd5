import Foundation
import LabKit
import Markup
import SyncProtocol

extension Report {
    var html: String {
        var body = ""
        var inTable = false
        var inList = false
        var foldNextList = false
        let f = figures
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = String(line)
            if text.hasPrefix("| ") {
                if text.contains("| --- ") { continue }
                let cells = text.dropFirst(2).dropLast(2).components(separatedBy: " | ")
                if !inTable {
                    let header = cells.map { Element("th").text(Self.plain($0)).render() }.joined()
                    body += "<table><tr>" + header + "</tr>\n"
                    inTable = true
                } else {
                    body += "<tr>" + cells.map { Element("td").text(Self.plain($0)).render() }.joined() + "</tr>\n"
                }
                continue
            }
            if inTable { body += "</table>\n"; inTable = false }
            if text.hasPrefix("- ") {
                if !inList {
                    // A long run's lineage list is folded: the timeline shows it, the list is there to search.
                    if foldNextList && f.lineages.count > 20 {
                        body += "<details><summary>\(f.lineages.count) edits (unfold)</summary>"
                    } else {
                        foldNextList = false
                    }
                    body += "<ul>\n"
                    inList = true
                }
                body += "<li>\(htmlEscape(String(text.dropFirst(2))))</li>\n"
                continue
            }
            if inList {
                body += foldNextList ? "</ul></details>\n" : "</ul>\n"
                inList = false
                foldNextList = false
            }
            if text.hasPrefix("## Lineage") { foldNextList = true }
            if text.hasPrefix("## ") && !body.contains("<h2>") { body += timelineHTML + plotsHTML }
            if text.hasPrefix("## ") { body += "<h2>\(htmlEscape(String(text.dropFirst(3))))</h2>\n" }
            else if text.hasPrefix("# ") { body += "<h1>\(htmlEscape(String(text.dropFirst(2))))</h1>\n" }
            else if !text.isEmpty { body += "<p>\(htmlEscape(text))</p>\n" }
        }
        if inTable { body += "</table>\n" }
        if inList { body += foldNextList ? "</ul></details>\n" : "</ul>\n" }
        return """
            <!doctype html><html><head><meta charset="utf-8">
            <script>window.onerror = function (m, src, line) {
              document.documentElement.setAttribute('data-script-error', m + ' (line ' + line + ')'); };</script>
            <title>\(htmlEscape(data.topology.name)) — SyncLab</title>
            <style>body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
            table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem \
            .5rem;text-align:left}
            th{background:#f3f3f3}h1{color:\(passed ? "#1a7f37" : "#cf222e")}code{background:#f3f3f3}
            \(Timeline.style)</style></head>
            <body>
            \(body)\(Timeline.script)</body></html>

            """
    }

    /// A line of report.md as plain text: its inline markdown (`**`, backticks) dropped.
    static func plain(_ s: String) -> String {
        s.replacingOccurrences(of: "**", with: "").replacingOccurrences(of: "`", with: "")
    }

    /// A line of report.md as HTML text.
    private func htmlEscape(_ s: String) -> String { Markup.text(Self.plain(s)) }
}
