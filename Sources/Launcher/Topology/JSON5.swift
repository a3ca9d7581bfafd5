/// A JSON5 value with the line it starts on, so a topology mistake can be reported at its line.
public indirect enum JSON5Value: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON5Node])
    case object([(key: String, node: JSON5Node)])
}

public struct JSON5Node: Sendable {
    public let value: JSON5Value
    public let line: Int

    public subscript(key: String) -> JSON5Node? {
        guard case .object(let pairs) = value else { return nil }
        return pairs.last(where: { $0.key == key })?.node
    }

    public var typeName: String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Where a JSON5 text is not JSON5.
public struct JSON5Error: Error, Sendable, CustomStringConvertible {
    public let line: Int
    public let message: String
    public var description: String { "line \(line): \(message)" }
}

/// A small JSON5 reader: comments (`//`, `/* */`), unquoted keys, single-quoted strings, trailing commas,
/// hexadecimal numbers, leading `+`, `Infinity` and `NaN` are not needed by topologies and are refused.
public struct JSON5Parser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    public static func parse(_ text: String) throws(JSON5Error) -> JSON5Node {
        var parser = JSON5Parser(bytes: Array(text.utf8))
        parser.skipSpace()
        let node = try parser.parseValue()
        parser.skipSpace()
        if parser.index < parser.bytes.count {
            throw JSON5Error(line: parser.line,
                message: "unexpected \(parser.describeCurrent()) after the end of the document")
        }
        return node
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of file" }
        let scalar = Unicode.Scalar(bytes[index])
        return "'\(Character(scalar))'"
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            let c = bytes[index]
            if c == 0x0A { line += 1; index += 1; continue }
            if c == 0x20 || c == 0x09 || c == 0x0D { index += 1; continue }
            if c == UInt8(ascii: "/") && index + 1 < bytes.count {
                if bytes[index + 1] == UInt8(ascii: "/") {
                    while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                    continue
                }
                if bytes[index + 1] == UInt8(ascii: "*") {
                    index += 2
                    while index + 1 < bytes.count
                        && !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                        if bytes[index] == 0x0A { line += 1 }
                        index += 1
                    }
                    index += 2
                    continue
                }
            }
            return
        }
    }

    private mutating func parseValue() throws(JSON5Error) -> JSON5Node {
        guard index < bytes.count else { throw JSON5Error(line: line,
            message: "unexpected end of file, expected a value") }
        let startLine = line
        let c = bytes[index]
        switch c {
        case UInt8(ascii: "{"): return JSON5Node(value: try parseObject(), line: startLine)
        case UInt8(ascii: "["): return JSON5Node(value: try parseArray(), line: startLine)
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return JSON5Node(value: .string(try parseString()), line: startLine)
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSON5Node(value: .number(try parseNumber()), line: startLine)
        default:
            let word = parseIdentifier()
            switch word {
            case "true": return JSON5Node(value: .bool(true), line: startLine)
            case "false": return JSON5Node(value: .bool(false), line: startLine)
            case "null": return JSON5Node(value: .null, line: startLine)
            case "": throw JSON5Error(line: line, message: "unexpected \(describeCurrent()), expected a value")
            default: throw JSON5Error(line: line,
                message: "unexpected word '\(word)', expected a value (strings need quotes)")
            }
        }
    }

    private mutating func parseObject() throws(JSON5Error) -> JSON5Value {
        index += 1
        var pairs: [(key: String, node: JSON5Node)] = []
        while true {
            skipSpace()
            guard index < bytes.count else { throw JSON5Error(line: line, message: "unterminated object: missing '}'") }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
            let key: String
            if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                key = try parseString()
            } else {
                key = parseIdentifier()
                if key.isEmpty { throw JSON5Error(line: line, message: "expected a key, found \(describeCurrent())") }
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw JSON5Error(line: line, message: "expected ':' after key \"\(key)\", found \(describeCurrent())")
            }
            index += 1
            skipSpace()
            if pairs.contains(where: { $0.key == key }) {
                throw JSON5Error(line: line, message: "key \"\(key)\" appears twice in one object")
            }
            pairs.append((key, try parseValue()))
            skipSpace()
            guard index < bytes.count else { throw JSON5Error(line: line, message: "unterminated object: missing '}'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
            throw JSON5Error(line: line,
                message: "expected ',' or '}' after the value of \"\(key)\", found \(describeCurrent())")
        }
    }

    private mutating func parseArray() throws(JSON5Error) -> JSON5Value {
        index += 1
        var items: [JSON5Node] = []
        while true {
            skipSpace()
            guard index < bytes.count else { throw JSON5Error(line: line, message: "unterminated array: missing ']'") }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            items.append(try parseValue())
            skipSpace()
            guard index < bytes.count else { throw JSON5Error(line: line, message: "unterminated array: missing ']'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw JSON5Error(line: line, message: "expected ',' or ']' in an array, found \(describeCurrent())")
        }
    }

    private mutating func parseIdentifier() -> String {
        let start = index
        while index < bytes.count {
            let c = bytes[index]
            let ok = (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
                || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "$")
                || c == UInt8(ascii: "-")
            if !ok { break }
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func parseNumber() throws(JSON5Error) -> Double {
        let start = index
        while index < bytes.count {
            let c = bytes[index]
            let ok = (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".")
                || c == UInt8(ascii: "e")
                || c == UInt8(ascii: "E") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: "_")
            if !ok { break }
            index += 1
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self).replacingUnderscores()
        guard let value = Double(text), value.isFinite else {
            throw JSON5Error(line: line, message: "'\(text)' is not a number")
        }
        return value
    }

    private mutating func parseString() throws(JSON5Error) -> String {
        let quote = bytes[index]
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let c = bytes[index]
            if c == quote { index += 1; return String(decoding: out, as: UTF8.self) }
            if c == 0x0A { throw JSON5Error(line: line, message: "unterminated string (a newline inside quotes)") }
            if c == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count else { break }
                let e = bytes[index]
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "u"):
                    guard index + 4 < bytes.count,
                          let code = UInt32(String(decoding: bytes[(index + 1)...(index + 4)], as: UTF8.self),
                              radix: 16),
                          let scalar = Unicode.Scalar(code)
                    else { throw JSON5Error(line: line, message: "bad \\u escape in a string") }
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    index += 4
                case 0x0A: line += 1
                default: out.append(e)
                }
                index += 1
                continue
            }
            out.append(c)
            index += 1
        }
        throw JSON5Error(line: line, message: "unterminated string")
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(filter { $0 != "_" }) }
}
