import Foundation

/// Any JSON value: control arguments and replies, event fields. Objects keep their keys in the order given (so event
/// lines read in a stable order); parsed objects have their keys sorted. Two objects are equal when they hold the
/// same keys with equal values, in any order, as JSON means.
public enum JSONValue: Sendable, Equatable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.int(a), .double(b)), let (.double(b), .int(a)): return Double(a) == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            guard a.count == b.count else { return false }
            return a.allSatisfy { key, value in b.contains { $0.0 == key && $0.1 == value } }
        default: return false
        }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            let keyed = try decoder.container(keyedBy: AnyKey.self)
            var pairs: [(String, JSONValue)] = []
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                pairs.append((key.stringValue, try keyed.decode(JSONValue.self, forKey: key)))
            }
            self = .object(pairs)
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .int(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v):
            // JSON has no NaN or infinity; JSONEncoder would throw on them. Written as null, as `write(to:)` does.
            var c = encoder.singleValueContainer()
            if v.isFinite { try c.encode(v) } else { try c.encodeNil() }
        case .string(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .array(let v):
            var c = encoder.unkeyedContainer()
            for item in v { try c.encode(item) }
        case .object(let pairs):
            var c = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in pairs { try c.encode(value, forKey: AnyKey(key)) }
        }
    }

    /// Compact JSON text with keys in their given order.
    public var description: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .int(let v): out += String(v)
        case .double(let v):
            if v.isFinite {
                if v == v.rounded() && abs(v) < 1e15 { out += String(Int64(v)) } else { out += String(v) }
            } else {
                out += "null"
            }
        case .string(let v): JSONValue.writeString(v, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, pair) in pairs.enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(pair.0, to: &out)
                out += ":"
                pair.1.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        // Most strings (ids, keys, event types) need no escaping: append them whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Compact JSON with keys in their given order, appended as UTF-8: the same text as `write(to: inout String)`,
    /// without String's per-append bookkeeping (event lines are built this way on every loop iteration).
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: JSONValue.nullBytes)
        case .bool(let v): out.append(contentsOf: v ? JSONValue.trueBytes : JSONValue.falseBytes)
        case .int(let v): JSONValue.writeInteger(v, to: &out)
        case .double(let v):
            if v.isFinite {
                if v == v.rounded() && abs(v) < 1e15 {
                    JSONValue.writeInteger(Int(v), to: &out)
                } else if let thousandths = JSONValue.exactThousandths(v) {
                    JSONValue.writeThousandths(thousandths, to: &out)
                } else {
                    out.append(contentsOf: String(v).utf8)
                }
            } else {
                out.append(contentsOf: JSONValue.nullBytes)
            }
        case .string(let v): JSONValue.writeString(v, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(pair.0, to: &out)
                out.append(UInt8(ascii: ":"))
                pair.1.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `v * 1000` when `v` is the Double nearest to a whole number of thousandths (the rounded seconds of events),
    /// whose shortest spelling is then that number's decimal one.
    public static func exactThousandths(_ v: Double) -> Int? {
        let scaled = (v * 1000).rounded()
        guard abs(scaled) < 1e12, scaled / 1000 == v else { return nil }
        return Int(scaled)
    }

    /// `thousandths / 1000` in decimal, trailing zeros left out, as `String(Double)` spells it: "12.5", "-0.035".
    static func writeThousandths(_ thousandths: Int, to out: inout [UInt8]) {
        if thousandths < 0 && thousandths > -1000 { out.append(UInt8(ascii: "-")) }
        writeInteger(thousandths / 1000, to: &out)
        var fraction = abs(thousandths % 1000)
        guard fraction != 0 else { return }
        out.append(UInt8(ascii: "."))
        var divisor = 100
        while fraction != 0 {
            out.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
    }

    private static let nullBytes: [UInt8] = Array("null".utf8)
    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)

    /// Decimal digits of `value`, as `String(value)` spells them.
    public static func writeInteger(_ value: Int, to out: inout [UInt8]) {
        if value == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            while magnitude > 0 {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    /// Writes `value` in decimal at `out`, as `String(value)` spells it (at most 20 bytes); returns how many. For a
    /// writer that fills memory it has already reserved (a hint's body, many a second).
    public static func writeDecimal(_ value: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var start = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            start = 1
        }
        var magnitude = value.magnitude
        var digits = 1
        var bound: UInt = 10
        while digits < 20 && magnitude >= bound {
            digits += 1
            bound &*= 10
        }
        var index = start + digits
        repeat {
            index -= 1
            out[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        return start + digits
    }

    /// True when no byte of `utf8` needs escaping in a JSON string (no quote, backslash or control character), so
    /// the bytes can be copied between quotes as they are. Looks at eight bytes at a time.
    public static func isPlainString(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= utf8.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // A word with a non-ASCII byte is flagged too: look at its bytes one by one.
            if JSONBytes.mayNeedAttention(word) {
                for offset in index..<index + 8 where needsEscape(utf8[offset]) { return false }
            }
            index += 8
        }
        for offset in index..<utf8.count where needsEscape(utf8[offset]) { return false }
        return true
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// A JSON string as `writeString(_:to: inout String)` writes it, appended as UTF-8.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            // Most strings (ids, keys, event types) need no escaping: append them whole.
            if isPlainString(utf8) {
                out.append(contentsOf: utf8)
                return
            }
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [
                        UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                    ])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: - Reading

    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first(where: { $0.0 == key })?.1
    }

    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    public var intValue: Int? {
        switch self {
        case .int(let v): return v
        case .double(let v): return v == v.rounded() ? Int(v) : nil
        default: return nil
        }
    }
    public var doubleValue: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .double(let v): return v
        default: return nil
        }
    }
    public var boolValue: Bool? { if case .bool(let v) = self { return v } else { return nil } }
    public var arrayValue: [JSONValue]? { if case .array(let v) = self { return v } else { return nil } }
    public var objectValue: [(String, JSONValue)]? { if case .object(let v) = self { return v } else { return nil } }

    /// Parses JSON text as strictly as message bodies are: RFC 8259 exactly, no key twice in an object, at most
    /// `Limits.maxDepth` levels deep. `JSONParser` reads it in one pass; what it refuses goes the checked Foundation
    /// way, which says why.
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        if let value = text.withUTF8({ JSONParser.parse($0) }) { return value }
        return try parseWithFoundation(text)
    }

    /// `parse` on UTF-8 bytes already in memory (a line of a file read whole), without making a String of them.
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        if let value = JSONParser.parse(bytes) { return value }
        return try parseWithFoundation(String(decoding: bytes, as: UTF8.self))
    }

    /// `JSONChecker` then Foundation's `JSONDecoder`: the reference `JSONParser` is tested against, and the path
    /// that explains a refusal.
    static func parseWithFoundation(_ text: String) throws -> JSONValue {
        let bytes = Array(text.utf8)
        do {
            try JSONChecker.check(bytes, schema: .any)
        } catch .notAnObject {
            // A bare number, string or literal is a JSON value too.
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not JSON: \(error)"))
        }
        return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
}

/// A coding key for any string.
public struct AnyKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ string: String) { self.stringValue = string }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { return nil }
}
