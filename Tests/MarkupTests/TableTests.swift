import Markup
import Testing

/// One typed table, two renderers: each escapes what its own syntax needs and nothing else.
struct TableTests {
    static let tricky = Table(["a|b", "c"], rows: [Table.Row(["x | y", "line one\nline two"])])

    @Test func markdownEscapesPipesAndTurnsLineBreaksIntoSpaces() {
        #expect(Self.tricky.markdown == "| a\\|b | c |\n| --- | --- |\n| x \\| y | line one line two |\n")
        // Every row still has its two cells: nothing in a cell ends it or its row.
        let row = Self.tricky.markdown.split(separator: "\n")[2]
        #expect(row.split(separator: "|", omittingEmptySubsequences: false).count - 1 == 3 + 1)
    }

    @Test func markdownLeavesPlainCellsAsTheyAreAndWritesAnEmptyCellAsOneSpace() {
        let table = Table(["device", "count"], rows: [Table.Row(["a — ü", "3"]), Table.Row(["… 2 more", ""])])
        #expect(table.markdown == "| device | count |\n| --- | --- |\n| a — ü | 3 |\n| … 2 more | |\n")
    }

    @Test func markdownMarksStrongCodeAndLinks() {
        let cell = Table.Cell([.strong("NO"), .text(" "), .code("k|1"), .text(" "), .link("run", href: "a/b.md")])
        let table = Table(["x"], rows: [Table.Row([cell])])
        #expect(table.markdown.hasSuffix("| **NO** `k\\|1` [run](a/b.md) |\n"))
    }

    @Test func htmlEscapesThroughMarkupAndLeavesPipesAndLineBreaksAlone() {
        let table = Table(["a<b", "c"], rows: [Table.Row(["x | y & <z>", "line one\nline two"])])
        #expect(table.html == "<table><tr><th>a&lt;b</th><th>c</th></tr>\n"
            + "<tr><td>x | y &amp; &lt;z&gt;</td><td>line one\nline two</td></tr>\n</table>\n")
    }

    @Test func htmlShowsWordsWithoutMarkdownMarksALinkAsAnAnchorAndMarksAsClasses() {
        var table = Table(["check", "A"], htmlClass: "differing")
        table.add([Table.Cell([.strong("NO"), .code("k")]), Table.Cell("FAILED", mark: .bad)], htmlClass: "changed")
        table.add([Table.Cell([.link("a \"b\"", href: "x?y=1&z=\"2\"")]), ""])
        #expect(table.html == "<table class=\"differing\"><tr><th>check</th><th>A</th></tr>\n"
            + "<tr class=\"changed\"><td>NOk</td><td class=\"bad\">FAILED</td></tr>\n"
            + "<tr><td><a href=\"x?y=1&amp;z=&quot;2&quot;\">a \"b\"</a></td><td></td></tr>\n</table>\n")
    }

    @Test func aCellsPlainWordsDropItsMarks() {
        #expect(Table.Cell([.strong("0"), .text(": never "), .code("fired")]).plain == "0: never fired")
    }
}
