/// Decodes a message body after checking that it carries no key outside `T.fields`. Nested structs (`Op`, `OpResult`,
/// `Change`, `ChangeRef`) make the same check themselves with `Decoder.strictContainer`.
struct Strict<T: MessageBody>: Decodable {
    let value: T

    init(from decoder: Decoder) throws {
        let container: KeyedDecodingContainer<AnyKey>
        do {
            container = try decoder.container(keyedBy: AnyKey.self)
        } catch {
            throw StrictFailure.notAnObject
        }
        for key in container.allKeys where !T.fields.contains(key.stringValue) {
            throw StrictFailure.unknownField(key.stringValue)
        }
        value = try T(from: decoder)
    }
}

/// Why `Strict` refused a body; `Codec` turns it into a `ProtocolError`.
enum StrictFailure: Error {
    case notAnObject
    /// The field's path from the body's root, e.g. `ops[2].colour`.
    case unknownField(String)
}

extension Decoder {
    /// The keyed container of an object that may carry only `fields`; any other key is refused with its path, so an
    /// unknown field deep inside a message is as much an error as one at its root.
    func strictContainer<Key: CodingKey>(keyedBy: Key.Type, fields: Set<String>) throws -> KeyedDecodingContainer<Key> {
        let any = try container(keyedBy: AnyKey.self)
        for key in any.allKeys where !fields.contains(key.stringValue) {
            throw StrictFailure.unknownField(codingPathText(codingPath + [key]))
        }
        return try container(keyedBy: Key.self)
    }
}

/// A coding path as a reader writes it: `ops[2].base`.
func codingPathText(_ path: [CodingKey]) -> String {
    var out = ""
    for key in path {
        if let index = key.intValue {
            out += "[\(index)]"
        } else {
            out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return out
}
