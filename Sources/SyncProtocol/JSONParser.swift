/// Builds a `JSONValue` from JSON text in one pass over its bytes, giving what `JSONChecker` followed by
/// Foundation's `JSONDecoder` gives (`JSONValue.parse` used to be exactly that, and the tests hold it to it): the
/// grammar of RFC 8259 exactly, no key twice in an object, at most `Limits.maxDepth` levels, objects' keys sorted,
/// a number an `.int` when its value is a whole number that fits (`1`, `1.0`, `1e2`), else a `.double`. It returns
/// nil for anything it refuses; the caller asks `JSONChecker` for the reason, so errors read as they always did.
/// On event lines, which a big run's report reads by the million, about 1 µs a line where the Foundation path took
/// about 30 (perf profiles of `synclab sim`, docs/PERFORMANCE.md).
struct JSONParser {
    private let text: UnsafeBufferPointer<UInt8>
    private var offset = 0

    private init(_ text: UnsafeBufferPointer<UInt8>) { self.text = text }

    /// The value `bytes` holds, or nil when they are not one JSON value (or one JSONDecoder would refuse).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipWhitespace()
        return parser.offset == bytes.count ? value : nil
    }

    private var peek: UInt8? { offset < text.count ? text[offset] : nil }

    private mutating func skipWhitespace() { JSONScan.skipWhitespace(text, &offset) }

    private mutating func value(depth: Int) -> JSONValue? {
        guard let byte = peek else { return nil }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Limits.maxDepth else { return nil }
            return object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < Limits.maxDepth else { return nil }
            return array(depth: depth + 1)
        case UInt8(ascii: "\""):
            return string().map { .string($0) }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return number()
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return nil
        }
    }

    private mutating func object(depth: Int) -> JSONValue? {
        offset += 1  // {
        var pairs: [(String, JSONValue)] = []
        if JSONScan.closesAtOnce(UInt8(ascii: "}"), text, &offset) { return .object(pairs) }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { return nil }
            offset += 1
            skipWhitespace()
            guard let value = value(depth: depth) else { return nil }
            pairs.append((key, value))
            switch JSONScan.separator(UInt8(ascii: "}"), text, &offset) {
            case .comma: continue
            case .close:
                // Sorted as `JSONValue.init(from:)` sorts a decoded object's keys; a key twice is refused.
                if pairs.count > 1 {
                    var sorted = true
                    for i in 1..<pairs.count where !(pairs[i - 1].0 < pairs[i].0) {
                        sorted = false
                        break
                    }
                    if !sorted {
                        pairs.sort { $0.0 < $1.0 }
                        for i in 1..<pairs.count where pairs[i - 1].0 == pairs[i].0 { return nil }
                    }
                }
                return .object(pairs)
            case .other: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        offset += 1  // [
        var items: [JSONValue] = []
        if JSONScan.closesAtOnce(UInt8(ascii: "]"), text, &offset) { return .array(items) }
        while true {
            skipWhitespace()
            guard let item = value(depth: depth) else { return nil }
            items.append(item)
            switch JSONScan.separator(UInt8(ascii: "]"), text, &offset) {
            case .comma: continue
            case .close: return .array(items)
            case .other: return nil
            }
        }
    }

    /// A string's content, its escapes decoded; nil for a control character, a bad escape or an unpaired surrogate
    /// (which JSONDecoder refuses).
    private mutating func string() -> String? {
        offset += 1  // opening quote
        let start = offset
        // The common case: no escape, copied at once.
        while offset < text.count {
            let byte = text[offset]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: text[start..<offset])
                offset += 1
                return String(decoding: content, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { return nil }
            offset += 1
        }
        guard offset < text.count else { return nil }
        var bytes = Array(text[start..<offset])
        while offset < text.count {
            let byte = text[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: bytes, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let kind = peek else { return nil }
                offset += 1
                switch kind {
                case UInt8(ascii: "u"):
                    guard var code = JSONScan.hex4(text, &offset) else { return nil }
                    if (0xD800...0xDBFF).contains(code) {
                        guard peek == UInt8(ascii: "\\"), offset + 1 < text.count, text[offset + 1] == UInt8(ascii: "u")
                        else { return nil }
                        offset += 2
                        guard let low = JSONScan.hex4(text, &offset), (0xDC00...0xDFFF).contains(low) else {
                            return nil
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        return nil
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    bytes.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    guard let escaped = JSONScan.escapedByte(kind) else { return nil }
                    bytes.append(escaped)
                }
            default:
                guard byte >= 0x20 else { return nil }
                bytes.append(byte)
            }
        }
        return nil
    }

    /// A number, read as `JSONValue.init(from:)` reads one through JSONDecoder (its `decode(Int.self)` first, then
    /// `decode(Double.self)`): an integer literal that fits is that int; otherwise the literal's double, unless that
    /// double is a whole number an `Int` holds, which makes it an int: the double itself below 2⁵³, above it the
    /// literal's own decimal digits (Foundation's `Decimal` path: the fraction's digits truncated, -2⁶³ refused).
    private mutating func number() -> JSONValue? {
        let start = offset
        guard let parts = try? JSONScan.number(text, &offset) else { return nil }
        let negative = parts.negative
        let integral = parts.fraction == nil && parts.exponent == nil
        var exponent = 0
        if let digits = parts.exponent {
            for byte in text[digits] { exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), 100_000) }
            if parts.exponentNegative { exponent = -exponent }
        }
        if integral, let int = Self.integer(text, parts.integer, negative: negative) { return .int(int) }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: text[start..<offset]), as: UTF8.self)
        guard let double = Double(literal), double.isFinite else { return nil }
        guard let whole = Int(exactly: double) else { return .double(double) }
        if double.magnitude < 0x1p53 { return .int(whole) }
        // The decimal digits, all of them, as one mantissa with a power of ten.
        let fraction = parts.fraction ?? offset..<offset
        let digits = Array(text[parts.integer]) + text[fraction]
        let power = exponent - fraction.count
        guard let int = Self.decimalInteger(digits, power: power, negative: negative) else { return .double(double) }
        return .int(int)
    }

    /// The integer literal `digits` (with its sign), nil when it does not fit an `Int`.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>, _ digits: Range<Int>, negative: Bool) -> Int? {
        var magnitude: UInt64 = 0
        for index in digits {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(text[index] - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            magnitude = sum
        }
        if !negative { return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil }
        if magnitude == UInt64(Int.max) + 1 { return Int.min }
        return magnitude <= UInt64(Int.max) ? -Int(magnitude) : nil
    }

    /// `FixedWidthInteger.init?(_: Decimal)` as Foundation's JSONDecoder applies it to a literal: the mantissa
    /// (without its trailing zeros) in 64 bits, divided by ten (truncating) for each negative power, multiplied for
    /// each positive one; a negative
    /// value's magnitude must fit `Int` before it is negated.
    private static func decimalInteger(_ digits: [UInt8], power: Int, negative: Bool) -> Int? {
        var leading = digits.drop { $0 == UInt8(ascii: "0") }
        // Decimal keeps its mantissa compact: trailing zeros move into the power.
        var power = power
        while leading.last == UInt8(ascii: "0") {
            leading.removeLast()
            power += 1
        }
        // Decimal keeps at most 38 significant digits; a mantissa that long cannot fit 64 bits anyway.
        guard leading.count <= 38 else { return nil }
        var d: UInt64 = 0
        while let digit = leading.popFirst() {
            let (times, o1) = d.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            d = sum
        }
        if power < 0 {
            for _ in 0 ..< -power {
                d /= 10
                if d == 0 { break }
            }
        } else {
            for _ in 0..<power {
                let (times, overflow) = d.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                d = times
            }
        }
        guard d <= UInt64(Int.max) else { return nil }
        return negative ? -Int(d) : Int(d)
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in bytes {
            guard peek == byte else { return false }
            offset += 1
        }
        return true
    }
}
