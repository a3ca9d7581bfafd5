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

    @Test("seconds rounded to thousandths are spelled as String(Double) spells them")
    func thousandthsMatchText() {
        var seconds: [Double] = [0.001, -0.001, 0.1, 0.01, 0.999, 1.5, -1.5, 12.345, 1e9 + 0.001, -0.035, 0.1 + 0.2]
        var state: UInt64 = 7
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let thousandths = Double(Int(state >> 20) % 20_000_000_000 - 10_000_000_000)
            seconds.append(thousandths / 1000)
            seconds.append((thousandths / 1000_000).rounded(.towardZero) / 1000)
        }
        for value in seconds {
            var text = ""
            JSONValue.double(value).write(to: &text)
            var bytes: [UInt8] = []
            JSONValue.double(value).write(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == text, "\(value)")
        }
    }
}
