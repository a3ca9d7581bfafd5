/// A pass over JSON text before it is parsed, for what Foundation's parser lets through or cannot survive.
enum JSONShape {
    /// What is wrong with the shape of `text`, or nil. Checks, outside strings:
    /// - nesting no deeper than `Limits.maxDepth`: JSONDecoder recurses once per level, and a few hundred levels of
    ///   `[` in a control's free-form args would overflow a small thread stack before its own limit (512) refuses them;
    /// - no comma right before `}` or `]`: Foundation's parser accepts `{"a":1,}`, which is not JSON.
    /// Everything else (tokens, escapes, numbers, trailing bytes) is left to the parser, which refuses it.
    static func problem(in text: [UInt8]) -> String? {
        var depth = 0
        var inString = false, escaped = false
        var lastSignificant: UInt8 = 0
        for (offset, byte) in text.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    lastSignificant = byte
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                continue
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth > Limits.maxDepth { return "nested more than \(Limits.maxDepth) levels deep (the limit)" }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if lastSignificant == UInt8(ascii: ",") {
                    return "a comma before \(Character(Unicode.Scalar(byte))) at byte \(offset)"
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
