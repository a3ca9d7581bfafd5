/// The free-form bodies, `control` and `controlAck`, written by hand as the others are: the launcher sends a control
/// command for every scenario step and the device answers each, so at one edit every 10 ms JSONEncoder was ≈ 7 % of
/// a sending device's main thread (docs/PERFORMANCE.md). Their `JSONValue`s are written as JSONEncoder writes them:
/// object keys in UTF-8 byte order (JSONEncoder's `.sortedKeys` order), strings with its escapes. Two things are left
/// to JSONEncoder, and make the whole body its: a double (its own number format: `1e-07`, `-0`, `100`) and an object
/// with a key twice (which of the two it keeps is its business). `CodecFastPathTests` compares the bytes.
extension BodyWriter {
    mutating func control(_ control: Control) -> Bool {
        beginObject()
        key("args")
        guard object(control.args.map { ($0.key, $0.value) }) else { return false }
        field("command", control.command)
        field("req", control.req)
        endObject()
        return true
    }

    mutating func controlAck(_ ack: ControlAck) -> Bool {
        beginObject()
        if let data = ack.data {
            key("data")
            guard value(data) else { return false }
        }
        field("detail", ack.detail)
        field("ok", ack.ok)
        field("req", ack.req)
        endObject()
        return true
    }

    /// `value` after a key or a separator; false when it holds what is left to JSONEncoder.
    private mutating func value(_ value: JSONValue) -> Bool {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let number): integer(number)
        case .double: return false
        case .string(let text): string(text)
        case .array(let items):
            append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                guard self.value(item) else { return false }
            }
            append(UInt8(ascii: "]"))
        case .object(let pairs):
            return object(pairs)
        }
        return true
    }

    /// `{…}` with the keys in byte order; false for a key given twice (as Swift's `==` sees keys, as JSONEncoder's
    /// container does: "é" precomposed and decomposed are one key) or a value left to JSONEncoder.
    private mutating func object(_ pairs: [(String, JSONValue)]) -> Bool {
        if pairs.count > 1, Set(pairs.lazy.map(\.0)).count != pairs.count { return false }
        let sorted = pairs.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        append(UInt8(ascii: "{"))
        for (index, pair) in sorted.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            string(pair.0)
            append(UInt8(ascii: ":"))
            guard value(pair.1) else { return false }
        }
        append(UInt8(ascii: "}"))
        return true
    }
}
