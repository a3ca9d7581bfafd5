@testable import LabKit
@testable import PushBroker
import SyncProtocol
import Testing

/// A hint's body and its event fields are written from what its device and notice rendered once: byte for byte what
/// `Codec` and the field-by-field event writer spell (devices read the body; old run folders read the events).
@Suite struct HintTargetTests {
    static var numbers: [Int] {
        var numbers = [0, 1, 9, 10, 11, 99, 100, 12_345, Int.max, -1, -10, Int.min, Int.min + 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            numbers += [power - 1, power, power + 1]
        }
        return numbers
    }

    @Test("the hint body is what Codec writes, at every length of head and number, escaped accounts too")
    func bodyMatchesCodec() {
        for account in ["bench", "acme", "", "a\"b", "日本", "x\ny", String(repeating: "a", count: 70)] {
            let target = HintTarget(slot: 0, id: "p1", account: account)
            // One buffer for all, as the driver keeps one: a long body before a short one must not leave bytes.
            var body: [UInt8] = []
            for head in Self.numbers {
                for number in [1, 7, 1_000_000, Int.max] + (head == 0 ? Self.numbers : []) {
                    target.writeBody(of: HintRef(number: number, head: head), into: &body)
                    var expected: [UInt8] = []
                    Codec.writeBody(of: .hint(Hint(hint: "h-\(number)", account: account, head: head)),
                                    into: &expected)
                    #expect(body == expected, "account \(account), head \(head), number \(number)")
                }
            }
        }
    }

    @Test("the fields a target and a notice render once are the field-by-field spelling")
    func renderedFields() {
        let target = HintTarget(slot: 3, id: "dev \"é\"", account: "acme")
        #expect(target.deliveredFields.bytes == Array(#","device":"dev \"é\"","head":"#.utf8))
        #expect(target.acceptedFields.bytes == Array(#","device":"dev \"é\"","account":"acme","head":"#.utf8))
        let notice = NoticeFields(origin: "o1", seqs: .array([.int(4), .int(5)]))
        #expect(notice.fields.bytes == Array(#","origin":"o1","seqs":[4,5]"#.utf8))
        #expect(BrokerInstance.resyncNotice.fields.bytes == Array(#","origin":"broker","seqs":[]"#.utf8))
    }
}
