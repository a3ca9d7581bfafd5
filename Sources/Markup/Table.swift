/// A table made once and written twice: as a markdown table (report.md) and as an HTML table (report.html,
/// compare.html). A section builds its rows as typed cells, so neither renderer reads the other's text and each
/// escapes only what its own syntax needs: markdown the cell separator `|` and line breaks, HTML through `Markup`.
public struct Table: Sendable, Equatable {
    /// A piece of a cell's text.
    public enum Span: Sendable, Equatable {
        case text(String)
        /// `**x**` in markdown.
        case strong(String)
        /// `` `x` `` in markdown.
        case code(String)
        /// `[x](href)` in markdown, `<a href>` in HTML.
        case link(String, href: String)
    }

    /// How a cell reads at a glance; HTML gives it a class (`good`, `bad`), markdown says it in its words alone.
    public enum Mark: String, Sendable, Equatable {
        case good
        case bad
    }

    public struct Cell: Sendable, Equatable, ExpressibleByStringInterpolation {
        public var spans: [Span]
        public var mark: Mark?

        public init(_ spans: [Span], mark: Mark? = nil) {
            self.spans = spans
            self.mark = mark
        }

        public init(_ text: String, mark: Mark? = nil) { self.init([.text(text)], mark: mark) }

        public init(stringLiteral text: String) { self.init(text) }

        public static func strong(_ text: String) -> Cell { Cell([.strong(text)]) }

        public static func code(_ text: String) -> Cell { Cell([.code(text)]) }

        /// Its words, without marks: what the page shows and what a reader compares.
        public var plain: String {
            spans.map { span in
                switch span {
                case .text(let s), .strong(let s), .code(let s), .link(let s, _): s
                }
            }.joined()
        }
    }

    public struct Row: Sendable, Equatable {
        public var cells: [Cell]
        /// The HTML row's class (compare.html marks the rows that changed).
        public var htmlClass: String?

        public init(_ cells: [Cell], htmlClass: String? = nil) {
            self.cells = cells
            self.htmlClass = htmlClass
        }
    }

    public var columns: [String]
    public var rows: [Row]
    /// The HTML table's class.
    public var htmlClass: String?

    public init(_ columns: [String], rows: [Row] = [], htmlClass: String? = nil) {
        self.columns = columns
        self.rows = rows
        self.htmlClass = htmlClass
    }

    /// Appends a row of cells.
    public mutating func add(_ cells: [Cell], htmlClass: String? = nil) {
        rows.append(Row(cells, htmlClass: htmlClass))
    }

    // MARK: - markdown

    /// `| a | b |` lines under the header and its `| --- |` rule. An empty cell is written `| |`.
    public var markdown: String {
        var out = Self.markdownLine(columns.map(Self.markdownText)) + "|" + String(repeating: " --- |",
                                                                                   count: columns.count) + "\n"
        for row in rows { out += Self.markdownLine(row.cells.map(Self.markdown)) }
        return out
    }

    static func markdownLine(_ cells: [String]) -> String {
        "|" + cells.map { $0.isEmpty ? " |" : " " + $0 + " |" }.joined() + "\n"
    }

    static func markdown(_ cell: Cell) -> String {
        cell.spans.map { span in
            switch span {
            case .text(let s): markdownText(s)
            case .strong(let s): "**" + markdownText(s) + "**"
            case .code(let s): "`" + markdownText(s) + "`"
            case .link(let s, let href): "[" + markdownText(s) + "](" + markdownText(href) + ")"
            }
        }.joined()
    }

    /// A cell's text that cannot end its cell or its row: `|` escaped, line breaks as spaces.
    static func markdownText(_ text: String) -> String {
        guard text.contains(where: { $0 == "|" || $0.isNewline }) else { return text }
        var out = ""
        for character in text {
            if character == "|" {
                out += "\\|"
            } else {
                out.append(character.isNewline ? " " : character)
            }
        }
        return out
    }

    // MARK: - HTML

    /// `<table>` with a header row of `<th>` and a `<tr>` a row, each on its line; the cells' words as the page has
    /// always shown them (without markdown's marks), a link as `<a>`, a mark as the cell's class.
    public var html: String {
        var out = "<table" + (htmlClass.map { " class=\"" + Markup.attribute($0) + "\"" } ?? "") + ">"
            + Element("tr").children(columns.map { Element("th").text($0) }).render() + "\n"
        for row in rows {
            out += Element("tr").attribute("class", row.htmlClass).children(row.cells.map(Self.html)).render() + "\n"
        }
        return out + "</table>\n"
    }

    static func html(_ cell: Cell) -> Element {
        var td = Element("td").attribute("class", cell.mark?.rawValue)
        for span in cell.spans {
            switch span {
            case .text(let s), .strong(let s), .code(let s): td = td.text(s)
            case .link(let s, let href): td = td.child(Element("a", ["href": href]).text(s))
            }
        }
        return td
    }
}
