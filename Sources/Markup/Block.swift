/// One part of a page that is written both as markdown and as HTML (report.md and report.html are the same blocks).
public enum Block: Sendable, Equatable {
    /// `#`, `##` or `###` and its words.
    case heading(String, level: Int)
    /// A paragraph in markdown's inline syntax (`**`, backticks); the page shows its words without those marks.
    case paragraph(String)
    case table(Table)
    /// A bulleted list of markdown lines; with `folded`, the page puts it in a `<details>` with that summary.
    case list([String], folded: String? = nil)
    /// Markup for the page alone (the timeline, the plots): markdown leaves it out.
    case html(String)
}

extension Block {
    /// A report's section as most are: its `##` heading, a paragraph that says what it holds, and its table.
    public static func section(_ title: String, _ intro: String, _ table: Table) -> [Block] {
        [.heading(title, level: 2), .paragraph(intro), .table(table)]
    }
}
