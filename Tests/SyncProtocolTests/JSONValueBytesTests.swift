import SyncProtocol
import Testing

/// Event lines are built as bytes; they must be exactly the text the String writer gives.
@Suite("JSONValue bytes")
struct JSONValueBytesTests {
    @Test("the byte writer writes what the String writer writes")
    func bytesMatchText() {
        var everyByte = ""
        for value in 0..<0x80 { everyByte.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        let values: [JSONValue] = [
            .null, true, false, 0, 7, -42, .int(Int.max), .int(Int.min), 0.5, -2.0, 1e15, 1e300, 3.25e-7,
            .double(.nan), .double(.infinity), "", "plain", .string(everyByte + "é🌍\u{2028}"),
            .array([]), .object([]),
            .object([("z", 1), ("a", .array([.null, "x\"y", .object([("k\n", 1.5)])])), ("é", false)]),
        ]
        for value in values {
            var text = ""
            value.write(to: &text)
            var bytes: [UInt8] = []
            value.write(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == text)
        }
    }
}
