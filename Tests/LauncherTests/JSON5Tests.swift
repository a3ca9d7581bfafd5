import Testing
@testable import Launcher

@Suite struct JSON5Tests {
    @Test func readsCommentsTrailingCommasUnquotedKeysAndSingleQuotes() throws {
        let node = try JSON5Parser.parse("""
            // leading comment
            {
              a: 1, /* block
              comment */ 'b': 'two',
              "c": [true, false, null, -1.5e2,],
              d: { e: "x\\ny" },
            }
            """)
        #expect(node.line == 2)
        guard case .number(let a) = node["a"]?.value else { Issue.record("a"); return }
        #expect(a == 1)
        guard case .string(let b) = node["b"]?.value else { Issue.record("b"); return }
        #expect(b == "two")
        guard case .array(let c) = node["c"]?.value else { Issue.record("c"); return }
        #expect(c.count == 4)
        #expect(node["c"]?.line == 5)
        guard case .string(let e) = node["d"]?["e"]?.value else { Issue.record("e"); return }
        #expect(e == "x\ny")
        #expect(node["d"]?.line == 6)
    }

    @Test(arguments: [
        ("{ a: 1 ", "unterminated object"),
        ("{ a 1 }", "expected ':'"),
        ("[1 2]", "expected ',' or ']'"),
        ("{ a: \"open }", "unterminated string"),
        ("{ a: yes }", "unexpected word 'yes'"),
        ("{ a: 1, a: 2 }", "appears twice"),
        ("{} {}", "after the end"),
        ("", "unexpected end of file"),
    ])
    func refusesBrokenText(text: String, words: String) {
        do {
            _ = try JSON5Parser.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains(words), "\(error)")
        }
    }
}
