import Markup
import Testing

/// report.md and report.html from the same blocks.
struct DocumentTests {
    static let blocks: [Block] = [
        .heading("run: **FAIL**", level: 1),
        .paragraph("**Expectation met**: `k` <lost>"),
        .html("<svg id=\"timeline\"></svg>\n"),
        .heading("Invariants", level: 2),
        .table(Table(["invariant", "held"], rows: [Table.Row(["convergence", .strong("NO")])])),
        .heading("Partitions", level: 3),
        .list([]),
        .heading("Lineage", level: 2),
        .list(["`k1` saved", "`k2` saved"], folded: "2 edits (unfold)"),
    ]

    @Test func markdownPutsABlankLineBetweenBlocksAndLeavesPageMarkupOut() {
        #expect(Document(Self.blocks).markdown == """
            # run: **FAIL**

            **Expectation met**: `k` <lost>

            ## Invariants

            | invariant | held |
            | --- | --- |
            | convergence | **NO** |

            ### Partitions


            ## Lineage

            - `k1` saved
            - `k2` saved

            """)
    }

    @Test func htmlWritesEachBlockAsItsElementEscapedWithoutMarkdownMarks() {
        #expect(Document(Self.blocks).html == """
            <h1>run: FAIL</h1>
            <p>Expectation met: k &lt;lost&gt;</p>
            <svg id="timeline"></svg>
            <h2>Invariants</h2>
            <table><tr><th>invariant</th><th>held</th></tr>
            <tr><td>convergence</td><td>NO</td></tr>
            </table>
            <h3>Partitions</h3>
            <h2>Lineage</h2>
            <details><summary>2 edits (unfold)</summary><ul>
            <li>k1 saved</li>
            <li>k2 saved</li>
            </ul></details>

            """)
    }

    @Test func anUnfoldedListAndAParagraphOfSeveralLines() {
        let html = Document([.list(["a & b"]), .paragraph("one\ntwo")]).html
        #expect(html == "<ul>\n<li>a &amp; b</li>\n</ul>\n<p>one</p>\n<p>two</p>\n")
    }
}
