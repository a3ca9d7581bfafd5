import Foundation
import LabKit
import Markup
import SyncProtocol

extension Report {
    /// report.html: report.md's blocks as HTML, with the timeline and the plots before the first section.
    var html: String {
        var blocks = blocks
        let first = blocks.firstIndex { if case .heading(_, 2) = $0 { true } else { false } } ?? blocks.endIndex
        blocks.insert(.html(timelineHTML + plotsHTML), at: first)
        let body = Document(blocks).html
        return """
            <!doctype html><html><head><meta charset="utf-8">
            <script>window.onerror = function (m, src, line) {
              document.documentElement.setAttribute('data-script-error', m + ' (line ' + line + ')'); };</script>
            <title>\(Markup.text(data.topology.name)) — SyncLab</title>
            <style>body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
            table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem \
            .5rem;text-align:left}
            th{background:#f3f3f3}h1{color:\(passed ? "#1a7f37" : "#cf222e")}code{background:#f3f3f3}
            \(Timeline.style)</style></head>
            <body>
            \(body)\(Timeline.script)</body></html>

            """
    }
}
