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
    func strictContainer<Key: CodingKey>(keyedBy: Key.Type, fields: Set<String>) throws -> StrictContainer<Key> {
        // One container for both the check and the reads: Foundation builds a dictionary of the object's keys for
        // each container it makes, and a page holds hundreds of changes.
        let container = try container(keyedBy: AnyKey.self)
        for key in container.allKeys where !fields.contains(key.stringValue) {
            throw StrictFailure.unknownField(codingPathText(codingPath + [key]))
        }
        return StrictContainer(base: container)
    }
}

/// Reads the fields of an object whose keys `Decoder.strictContainer` has checked, by the type's own coding keys.
struct StrictContainer<Key: CodingKey> {
    let base: KeyedDecodingContainer<AnyKey>

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try base.decode(type, forKey: AnyKey(key.stringValue))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try base.decodeIfPresent(type, forKey: AnyKey(key.stringValue))
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
