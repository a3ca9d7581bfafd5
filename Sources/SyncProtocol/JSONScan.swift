/// The pieces of JSON's grammar that `JSONChecker`, `JSONParser` and `BodyReader` scan the same way; each says in its
/// own way what was wrong (a message, nil, or leaving the body to the strict path).
enum JSONScan {
    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Moves `offset` past RFC 8259's whitespace: space, line feed, carriage return, tab.
    static func skipWhitespace(_ text: UnsafeBufferPointer<UInt8>, _ offset: inout Int) {
        while offset < text.count {
            let byte = text[offset]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            offset += 1
        }
    }

    /// Just past an opening `{` or `[`: whether `closer` follows (after whitespace), an empty object or array, with
    /// `offset` moved past it; false with `offset` on the first byte that is not whitespace.
    static func closesAtOnce(_ closer: UInt8, _ text: UnsafeBufferPointer<UInt8>, _ offset: inout Int) -> Bool {
        skipWhitespace(text, &offset)
        guard offset < text.count, text[offset] == closer else { return false }
        offset += 1
        return true
    }

    /// What follows a member of an object or an element of an array (after whitespace).
    enum Separator {
        /// A comma: another member or element comes; `offset` is past it.
        case comma
        /// The object's or array's closing bracket; `offset` is past it.
        case close
        /// Neither (or the end of the text): `offset` is on that byte, for the caller's message.
        case other
    }

    /// Reads the separator after a member or an element of the object or array that `closer` ends.
    static func separator(_ closer: UInt8, _ text: UnsafeBufferPointer<UInt8>, _ offset: inout Int) -> Separator {
        skipWhitespace(text, &offset)
        guard offset < text.count else { return .other }
        switch text[offset] {
        case UInt8(ascii: ","):
            offset += 1
            return .comma
        case closer:
            offset += 1
            return .close
        default:
            return .other
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// The byte a one-letter escape stands for (`n` in `\n`, `"` in `\"`); nil for `u` and every other byte.
    static func escapedByte(_ kind: UInt8) -> UInt8? {
        switch kind {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return kind
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return nil
        }
    }

    /// The code of the 4 hex digits of a `\u` escape at `offset`, which moves past each digit read; nil at the first
    /// byte that is not one, or at the end, with `offset` on it.
    static func hex4(_ text: UnsafeBufferPointer<UInt8>, _ offset: inout Int) -> UInt32? {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard offset < text.count, let digit = hexValue(text[offset]) else { return nil }
            code = code << 4 | digit
            offset += 1
        }
        return code
    }

    /// Where the parts of a number lie in the text (the digits of each, without `-`, `.`, `e` or the exponent's sign).
    struct NumberParts {
        var negative: Bool
        var integer: Range<Int>
        var fraction: Range<Int>?
        var exponent: Range<Int>?
        var exponentNegative: Bool
    }

    /// The digit a number lacks: the integer's first, the first after `.`, the exponent's first.
    enum MissingDigit: Error { case integer, fraction, exponent }

    /// Scans a number as RFC 8259 writes one from `offset`, which ends past it, or on the byte where a digit lacks.
    static func number(_ text: UnsafeBufferPointer<UInt8>, _ offset: inout Int) throws(MissingDigit) -> NumberParts {
        func peek(_ offset: Int) -> UInt8? { offset < text.count ? text[offset] : nil }
        func digits(from start: Int) -> Range<Int> {
            var end = start
            while let byte = peek(end), isDigit(byte) { end += 1 }
            return start..<end
        }
        let negative = peek(offset) == UInt8(ascii: "-")
        if negative { offset += 1 }
        guard let first = peek(offset), isDigit(first) else { throw .integer }
        // A leading 0 stands alone: in `01` the number ends before the `1`.
        let integer = first == UInt8(ascii: "0") ? offset..<offset + 1 : digits(from: offset)
        offset = integer.upperBound
        var parts = NumberParts(negative: negative, integer: integer, fraction: nil, exponent: nil,
                                exponentNegative: false)
        if peek(offset) == UInt8(ascii: ".") {
            offset += 1
            guard let byte = peek(offset), isDigit(byte) else { throw .fraction }
            parts.fraction = digits(from: offset)
            offset = parts.fraction!.upperBound
        }
        if peek(offset) == UInt8(ascii: "e") || peek(offset) == UInt8(ascii: "E") {
            offset += 1
            if peek(offset) == UInt8(ascii: "+") || peek(offset) == UInt8(ascii: "-") {
                parts.exponentNegative = peek(offset) == UInt8(ascii: "-")
                offset += 1
            }
            guard let byte = peek(offset), isDigit(byte) else { throw .exponent }
            parts.exponent = digits(from: offset)
            offset = parts.exponent!.upperBound
        }
        return parts
    }
}
