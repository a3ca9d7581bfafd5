/// A pass over JSON text before it is parsed, for what Foundation's parser lets through or cannot survive.
enum JSONShape {
    /// What is wrong with the shape of `text`, or nil. Checks, outside strings:
    /// - nesting no deeper than `Limits.maxDepth`: JSONDecoder recurses once per level, and a few hundred levels of
    ///   `[` in a control's free-form args would overflow a small thread stack before its own limit (512) refuses them;
    /// - no comma right before `}` or `]`: Foundation's parser accepts `{"a":1,}`, which is not JSON.
    /// Everything else (tokens, escapes, numbers, trailing bytes) is left to the parser, which refuses it.
    static func problem(in text: [UInt8]) -> String? {
        text.withUnsafeBufferPointer { problem(in: $0) }
    }

    private static func problem(in text: UnsafeBufferPointer<UInt8>) -> String? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), comma = UInt8(ascii: ",")
        var depth = 0
        var lastSignificant: UInt8 = 0
        var offset = 0
        while offset < text.count {
            let byte = text[offset]
            offset += 1
            switch byte {
            case quote:
                // Skip the string: its brackets and commas are text.
                while offset < text.count {
                    let inner = text[offset]
                    offset += inner == backslash ? 2 : 1
                    if inner == quote { break }
                }
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth > Limits.maxDepth { return "nested more than \(Limits.maxDepth) levels deep (the limit)" }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if lastSignificant == comma {
                    return "a comma before \(Character(Unicode.Scalar(byte))) at byte \(offset - 1)"
                }
                depth -= 1
            default:
                break
            }
            lastSignificant = byte
        }
        return nil
    }
}
