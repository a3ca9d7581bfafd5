import Foundation
import SyncProtocol
import Testing

@testable import Launcher

/// `synclab compare` on two report.json values.
struct CompareTests {
    static func report(verdict: String, held: Bool, dropped: Int, p50: Double) -> JSONValue {
        try! JSONValue.parse(
            """
            {"verdict":"\(verdict)","seed":3,"invariants":[{"name":"no-lost-edit","held":\(held),"detail":"d"}],
             "hints":{"accepted":10,"dropped":\(dropped)},"propagation":{"p50Ms":\(p50)},
             "platforms":[{"platform":"ios","devices":1,"guarantee":"opportunistic"}]}
            """)
    }

    @Test func everyFigureSideBySideWithTheDifference() {
        let compare = Compare(
            nameA: "runs/a", a: Self.report(verdict: "pass", held: true, dropped: 2, p50: 10),
            nameB: "runs/b", b: Self.report(verdict: "fail", held: false, dropped: 5, p50: 10))
        let byName = Dictionary(compare.rows.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(compare.rows.first?.name == "verdict")
        #expect(byName["verdict"]?.difference == "differs")
        #expect(byName["invariant no-lost-edit"]?.a == "held" && byName["invariant no-lost-edit"]?.b == "FAILED")
        #expect(byName["hints.dropped"]?.difference == "+3 (+150 %)")
        #expect(byName["hints.accepted"]?.difference == "0" && byName["hints.accepted"]?.changed == false)
        #expect(byName["propagation.p50Ms"]?.changed == false)
        #expect(byName["platforms.ios.guarantee"]?.difference == "same")
        #expect(compare.table.contains("* hints.dropped"))
        #expect(!compare.table.contains("* hints.accepted"))
        #expect(compare.html.contains("<tr class=\"changed\"><td>hints.dropped</td>"))
    }

    @Test func aFigureOnlyOneRunHasIsShownWithoutADifference() {
        var b = Self.report(verdict: "pass", held: true, dropped: 2, p50: 10)
        if case .object(var members) = b {
            members.append(("extra", .int(4)))
            b = .object(members)
        }
        let compare = Compare(
            nameA: "a", a: Self.report(verdict: "pass", held: true, dropped: 2, p50: 10), nameB: "b", b: b)
        let extra = compare.rows.first { $0.name == "extra" }
        #expect(extra?.a == "—" && extra?.b == "4" && extra?.difference == "")
    }
}
