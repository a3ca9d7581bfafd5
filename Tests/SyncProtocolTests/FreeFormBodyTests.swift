import Foundation
import Testing

@testable import SyncProtocol

/// `control` and `controlAck` bodies are written by hand unless they hold what is left to JSONEncoder (a double, a
/// key twice): either way the bytes must be JSONEncoder's.
@Suite("Free-form bodies")
struct FreeFormBodyTests {
    static let leaves: [JSONValue] = [
        .null, true, false, 0, -1, .int(Int.min), .int(Int.max), "", "a\"b\\c\n\u{1}\u{7F}", "é🌍\u{2028}", "/x/",
    ]
    /// Keys whose byte order differs from a case-insensitive or numeric order, and non-ASCII ones.
    static let keys = ["a", "B", "_x", "a10", "a9", "Z", "ab", "aB", "é", "e", "-", "1", "日本", "\"q\"", ""]

    /// Nested arrays and objects of every leaf and key, deterministic.
    static var values: [JSONValue] {
        var values = leaves
        for (i, key) in keys.enumerated() {
            let pairs = (0..<(i % 5 + 1)).map { keys[(i + $0 * 3) % keys.count] }
            let unique = Array(NSOrderedSet(array: pairs)) as! [String]
            values.append(.object(unique.enumerated().map { ($1, leaves[($0 + i) % leaves.count]) }))
            values.append(.array([leaves[i % leaves.count], .object([(key, .array([]))]), .object([])]))
        }
        values.append(.object(keys.reversed().map { ($0, .array(Array(leaves.prefix(3)))) }))
        return values
    }

    @Test("a control or ack of any value without doubles is written by hand, as JSONEncoder writes it")
    func handWrittenMatchesFoundation() {
        for (index, value) in Self.values.enumerated() {
            let args = Dictionary(uniqueKeysWithValues: Self.keys.prefix(index % Self.keys.count).map { ($0, value) })
            let messages: [Message] = [
                .control(Control(req: index, command: "edit", args: args)),
                .control(Control(req: -index, command: "c\(index)", args: ["v": value])),
                .controlAck(ControlAck(req: index, ok: index % 2 == 0, detail: "d \"\(index)\"", data: value)),
                .controlAck(ControlAck(req: index, ok: true)),
            ]
            for message in messages {
                let hand = BodyWriter.body(of: message)
                #expect(hand != nil, "left to JSONEncoder: \(message)")
                #expect(hand == Codec.foundationBody(of: message), "\(message)")
                var buffer: [UInt8] = Array("left over".utf8)
                Codec.writeBody(of: message, into: &buffer)
                #expect(buffer == Codec.foundationBody(of: message))
            }
        }
    }

    @Test("a double or a key given twice leaves the body to JSONEncoder, with its bytes", arguments: [
        JSONValue.double(0.5), .array([1, .double(1e-7)]), .object([("a", 1), ("a", 2)]),
        .object([("\u{E9}", 1), ("e\u{301}", 2)]), .object([("x", .object([("n", .double(-0.0))]))]),
    ])
    func leftToFoundation(value: JSONValue) {
        let messages: [Message] = [
            .control(Control(req: 1, command: "faults", args: ["v": value])),
            .controlAck(ControlAck(req: 1, ok: true, detail: "", data: value)),
        ]
        for message in messages {
            #expect(BodyWriter.body(of: message) == nil, "\(message)")
            #expect(Codec.body(of: message) == Codec.foundationBody(of: message))
            var buffer: [UInt8] = Array("left over".utf8)
            #expect(!BodyWriter.write(message, into: &buffer))
            #expect(buffer.isEmpty)
        }
    }
}
