import Markup
import Testing

struct MarkupTests {
    @Test func textEscapesAmpersandAndAngleBracketsButNotQuotes() {
        #expect(Markup.text("a < b && c > d") == "a &lt; b &amp;&amp; c &gt; d")
        #expect(Markup.text(#"say "hi" it's"#) == #"say "hi" it's"#)
    }

    @Test func attributeAlsoEscapesDoubleQuotes() {
        #expect(Markup.attribute(#"a "b" <c> & 'd'"#) == "a &quot;b&quot; &lt;c&gt; &amp; 'd'")
    }

    @Test func plainTextAndNonASCIIComeBackUnchanged() {
        for plain in ["", "device a", "pass 3 — push → pull", "über 日本 🙂"] {
            #expect(Markup.text(plain) == plain)
            #expect(Markup.attribute(plain) == plain)
        }
        #expect(Markup.text("🙂<é>") == "🙂&lt;é&gt;")
    }

    @Test func anEscapedAmpersandIsEscapedAgainNotLeftAsAnEntity() {
        // Text that looks like an entity is text: the reader must see "&amp;", not "&".
        #expect(Markup.text("&amp;") == "&amp;amp;")
    }

    @Test func anElementEscapesItsAttributesAndTextEachTheirWay() {
        let title = Element("title").text(#"op "k1" <lost>"#)
        let rect = Element("rect", ["class": "band", "data-lane": #"a"b"#]).child(title)
        #expect(rect.render()
            == #"<rect class="band" data-lane="a&quot;b"><title>op "k1" &lt;lost&gt;</title></rect>"#)
    }

    @Test func childrenNestInOrderAndRawMarkupIsWrittenAsItIs() {
        let row = Element("tr").children([Element("td").text("1 < 2"), Element("td").raw("<b>x</b>")])
        let table = Element("table").child(row).text("\n")
        #expect(table.render() == "<table><tr><td>1 &lt; 2</td><td><b>x</b></td></tr>\n</table>")
    }

    @Test func attributesKeepTheirOrderAndANilOneIsLeftOut() {
        let e = Element("line", ["x1": "0", "y1": "2"], selfClosing: true).attribute("stroke", "red")
            .attribute("opacity", nil)
        #expect(e.render() == #"<line x1="0" y1="2" stroke="red"/>"#)
        #expect(Element("td").render() == "<td></td>")
        #expect(Element("rect", selfClosing: true).text("t").render() == "<rect>t</rect>")
    }
}
