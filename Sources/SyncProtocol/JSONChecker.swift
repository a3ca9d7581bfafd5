/// A strict, single pass over JSON text before Foundation parses it, for what JSONDecoder does not check or cannot
/// survive:
/// - the grammar of RFC 8259 exactly (Foundation accepts `{"a":1,}`);
/// - no key outside the schema, at any depth (a hint carrying `body`, a notice's change carrying a `title`), and no
///   key twice in one object (JSONDecoder would silently keep one of them);
/// - at most `Limits.maxDepth` levels of nesting: JSONDecoder recurses once per level, and a few hundred levels of `[`
///   in a control's free-form args overflow a small thread stack before its own limit (512) refuses them.
/// Checking keys here rather than in `init(from:)` keeps decoding on Foundation's fast synthesized path.
struct JSONChecker {
    /// What the check found wrong.
    enum Failure: Error, Equatable {
        /// Not JSON: `detail` says what was expected where.
        case syntax(String)
        /// Valid JSON whose top level is not an object.
        case notAnObject
        case tooDeep
        /// The path of a key the schema does not allow, e.g. `ops[2].colour`.
        case unknownKey(String)
        /// The path of a key that appears twice in one object.
        case duplicateKey(String)
    }

    private let text: UnsafeBufferPointer<UInt8>
    private var offset = 0

    private init(_ text: UnsafeBufferPointer<UInt8>) { self.text = text }

    /// Checks that `text` is one JSON object following `schema`.
    static func check(_ text: [UInt8], schema: KeySchema) throws(Failure) {
        let result: Result<Void, Failure> = text.withUnsafeBufferPointer { buffer in
            var checker = JSONChecker(buffer)
            do throws(Failure) {
                checker.skipWhitespace()
                let isObject = checker.peek == UInt8(ascii: "{")
                try checker.value(schema, depth: 0)
                checker.skipWhitespace()
                guard checker.offset == buffer.count else { throw checker.expected("the end of the body") }
                guard isObject else { throw .notAnObject }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    // MARK: - Values

    private var peek: UInt8? { offset < text.count ? text[offset] : nil }

    private mutating func skipWhitespace() { JSONScan.skipWhitespace(text, &offset) }

    private func expected(_ what: String) -> Failure {
        guard let byte = peek else { return .syntax("expected \(what) at byte \(offset), found the end") }
        let found = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(byte))"
        return .syntax("expected \(what) at byte \(offset), found \(found)")
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private mutating func value(_ schema: KeySchema, depth: Int) throws(Failure) {
        skipWhitespace()
        guard let byte = peek else { throw expected("a value") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Limits.maxDepth else { throw .tooDeep }
            try object(schema, depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < Limits.maxDepth else { throw .tooDeep }
            try array(schema, depth: depth + 1)
        case UInt8(ascii: "\""):
            _ = try string()  // a value's text is JSONDecoder's to read
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: throw expected("a value")
        }
    }

    private mutating func object(_ schema: KeySchema, depth: Int) throws(Failure) {
        offset += 1  // {
        var allowed: [(key: [UInt8], value: KeySchema)]?
        if case .object(let keys) = schema { allowed = keys }
        var seenAllowed: UInt64 = 0  // bit i: allowed[i] seen; schemas have far fewer than 64 keys
        var seenFree = Set<[UInt8]>()
        if JSONScan.closesAtOnce(UInt8(ascii: "}"), text, &offset) { return }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw expected("a key in quotes") }
            let span = try string()
            let key = span.escaped ? ArraySlice(Self.unescape(text[span.range])) : ArraySlice(text[span.range])
            var valueSchema = KeySchema.any
            if let allowed {
                guard let index = allowed.firstIndex(where: { $0.key.elementsEqual(key) }) else {
                    throw .unknownKey(Self.keyText(key))
                }
                guard seenAllowed & (1 << UInt64(index)) == 0 else { throw .duplicateKey(Self.keyText(key)) }
                seenAllowed |= 1 << UInt64(index)
                valueSchema = allowed[index].value
            } else {
                guard seenFree.insert(Array(key)).inserted else { throw .duplicateKey(Self.keyText(key)) }
            }
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw expected("':' after a key") }
            offset += 1
            do throws(Failure) {
                try value(valueSchema, depth: depth)
            } catch {
                throw Self.prefixing(error, with: Self.keyText(key))
            }
            switch JSONScan.separator(UInt8(ascii: "}"), text, &offset) {
            case .comma: continue
            case .close: return
            case .other: throw expected("',' or '}'")
            }
        }
    }

    private mutating func array(_ schema: KeySchema, depth: Int) throws(Failure) {
        offset += 1  // [
        var elementSchema = KeySchema.any
        if case .array(let element) = schema { elementSchema = element }
        if JSONScan.closesAtOnce(UInt8(ascii: "]"), text, &offset) { return }
        var index = 0
        while true {
            do throws(Failure) {
                try value(elementSchema, depth: depth)
            } catch {
                throw Self.prefixing(error, with: "[\(index)]")
            }
            switch JSONScan.separator(UInt8(ascii: "]"), text, &offset) {
            case .comma: index += 1
            case .close: return
            case .other: throw expected("',' or ']'")
            }
        }
    }

    /// Checks a string and returns where its content lies; nothing is copied (only keys are ever read).
    private mutating func string() throws(Failure) -> (range: Range<Int>, escaped: Bool) {
        offset += 1  // opening quote
        let start = offset
        var escaped = false
        while offset < text.count {
            let byte = text[offset]
            if byte == UInt8(ascii: "\"") {
                offset += 1
                return (start..<offset - 1, escaped)
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                offset += 1
                guard let next = peek else { break }
                if next == UInt8(ascii: "u") {
                    offset += 1
                    guard JSONScan.hex4(text, &offset) != nil else { throw expected("4 hex digits after \\u") }
                } else {
                    guard JSONScan.escapedByte(next) != nil else {
                        throw expected("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
                    }
                    offset += 1
                }
                continue
            }
            guard byte >= 0x20 else {
                throw .syntax("control character 0x\(hex(byte)) inside a string at byte \(offset): it must be escaped")
            }
            offset += 1
        }
        throw expected("a closing quote")
    }

    private mutating func number() throws(Failure) {
        do throws(JSONScan.MissingDigit) {
            _ = try JSONScan.number(text, &offset)
        } catch {
            switch error {
            case .integer: throw expected("a digit")
            case .fraction: throw expected("a digit after '.'")
            case .exponent: throw expected("a digit in the exponent")
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in bytes {
            guard peek == byte else { throw expected("'\(word)'") }
            offset += 1
        }
    }

    // MARK: - Helpers

    /// The UTF-8 of a string whose escapes the scanner has already checked. An unpaired surrogate becomes U+FFFD:
    /// it is only compared with schema keys, which are plain ASCII.
    private static func unescape(_ raw: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8] {
        var scalars = String.UnicodeScalarView()
        var pendingHigh: UInt32?
        func flushHigh() {
            if pendingHigh != nil { scalars.append("\u{FFFD}") }
            pendingHigh = nil
        }
        let text = String(decoding: raw, as: UTF8.self).unicodeScalars
        var iterator = text.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\", let kind = iterator.next() else {
                flushHigh()
                scalars.append(scalar)
                continue
            }
            switch kind {
            case "u":
                var code: UInt32 = 0
                for _ in 0..<4 {
                    let digit = iterator.next().flatMap { JSONScan.hexValue(UInt8(truncatingIfNeeded: $0.value)) }
                    code = code << 4 | (digit ?? 0)
                }
                if (0xD800...0xDBFF).contains(code) {
                    flushHigh()
                    pendingHigh = code
                } else if (0xDC00...0xDFFF).contains(code), let high = pendingHigh {
                    pendingHigh = nil
                    scalars.append(Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)) ?? "\u{FFFD}")
                } else {
                    flushHigh()
                    scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                }
            default:
                flushHigh()
                let controls: [Unicode.Scalar: Unicode.Scalar] = [
                    "b": "\u{8}", "f": "\u{C}", "n": "\n", "r": "\r", "t": "\t",
                ]
                scalars.append(controls[kind] ?? kind)
            }
        }
        flushHigh()
        return Array(String(scalars).utf8)
    }

    private static func keyText(_ key: ArraySlice<UInt8>) -> String { String(decoding: key, as: UTF8.self) }

    /// The same failure with its path one level further out: `colour` inside `ops[2]` is `ops[2].colour`.
    private static func prefixing(_ failure: Failure, with outer: String) -> Failure {
        func join(_ inner: String) -> String { inner.hasPrefix("[") ? outer + inner : outer + "." + inner }
        switch failure {
        case .unknownKey(let path): return .unknownKey(join(path))
        case .duplicateKey(let path): return .duplicateKey(join(path))
        case .syntax, .notAnObject, .tooDeep: return failure
        }
    }
}
