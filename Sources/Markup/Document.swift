/// Blocks in order, written as markdown (a blank line between two blocks) or as the body of an HTML page.
public struct Document: Sendable {
    public var blocks: [Block]

    public init(_ blocks: [Block]) { self.blocks = blocks }

    public var markdown: String {
        blocks.compactMap { block -> String? in
            switch block {
            case .heading(let text, let level): String(repeating: "#", count: level) + " " + text + "\n"
            case .paragraph(let text): text + "\n"
            case .table(let table): table.markdown
            // An empty list still takes its place (and its blank line), as report.md always wrote it.
            case .list(let items, _): items.map { "- " + $0 + "\n" }.joined()
            case .html: nil
            }
        }.joined(separator: "\n")
    }

    public var html: String {
        blocks.map { block in
            switch block {
            case .heading(let text, let level):
                let tag = "h\(min(max(level, 1), 6))"
                return "<\(tag)>" + Self.htmlText(text) + "</\(tag)>\n"
            case .paragraph(let text):
                return text.split(whereSeparator: \.isNewline).map { "<p>" + Self.htmlText(String($0)) + "</p>\n" }
                    .joined()
            case .table(let table):
                return table.html
            case .list(let items, let folded):
                guard !items.isEmpty else { return "" }
                let list = "<ul>\n" + items.map { "<li>" + Self.htmlText($0) + "</li>\n" }.joined() + "</ul>"
                guard let folded else { return list + "\n" }
                return "<details><summary>" + Markup.text(folded) + "</summary>" + list + "</details>\n"
            case .html(let markup):
                return markup
            }
        }.joined()
    }

    /// Markdown inline text as the page shows it: its `**` and backticks dropped, then escaped.
    static func htmlText(_ text: String) -> String {
        Markup.text(text.replacing("**", with: "").replacing("`", with: ""))
    }
}
