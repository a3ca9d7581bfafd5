/// The keys a message body carried on the wire, read without decoding it: the device lists a hint's keys in its
/// `hint.received` event so the launcher can check that a hint carried nothing but references.
public enum WireKeys {
    /// The keys of the top-level object of `body`, in wire order; nil when `body` is not one valid JSON object.
    /// A key written with escapes is read through the full parser, so every key comes out as JSON means it.
    public static func topLevel(_ body: [UInt8]) -> [String]? {
        do {
            try JSONChecker.check(body, schema: .any)
        } catch {
            return nil
        }
        return topLevel(ofChecked: body)
    }

    /// The same for a body already known to be one valid JSON object: one `Codec.decode` accepted (both of its paths
    /// read every byte of the body as JSON), so the checker is not run again. Any other body must go through
    /// `topLevel(_:)`: this scan trusts the syntax.
    public static func topLevel(ofChecked body: [UInt8]) -> [String]? {
        var keys: [String] = []
        var depth = 0
        var index = 0
        var expectingKey = false
        while index < body.count {
            let byte = body[index]
            switch byte {
            case UInt8(ascii: "\""):
                // The checker passed, so the string is well formed: find its closing quote.
                var end = index + 1
                var escaped = false
                while body[end] != UInt8(ascii: "\"") {
                    if body[end] == UInt8(ascii: "\\") {
                        escaped = true
                        end += 1
                    }
                    end += 1
                }
                if depth == 1 && expectingKey {
                    if escaped { return slowKeys(body) }
                    keys.append(String(decoding: body[(index + 1)..<end], as: UTF8.self))
                    expectingKey = false
                }
                index = end + 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                expectingKey = depth == 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                expectingKey = depth == 1
            default:
                break
            }
            index += 1
        }
        return keys
    }

    private static func slowKeys(_ body: [UInt8]) -> [String]? {
        guard let value = try? JSONValue.parse(String(decoding: body, as: UTF8.self)) else { return nil }
        return value.objectValue?.map(\.0)
    }
}
