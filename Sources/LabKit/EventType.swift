import SyncProtocol

/// One type of event of `events.jsonl`: its name (the `type` field), the roles that write it, its fields with their
/// kinds, and one line of meaning. `EventCatalogue` holds every one. An emitter writes `EventCatalogue.x.name` and
/// the launcher matches `case EventCatalogue.x:` against an event's type, so neither spells a name of its own.
public struct EventType: Sendable, Hashable, CustomStringConvertible {
    public enum Role: String, Sendable, Hashable, CaseIterable {
        case server, broker, device, launcher
    }

    /// What a field holds, as JSON.
    public enum Kind: String, Sendable, Hashable {
        case integer, number, string, bool, array, object, any

        /// Whether a field's value is of this kind; an integer is a number too, a missing value is none.
        public func matches(_ value: JSONValue?) -> Bool {
            switch (self, value) {
            case (_, nil): false
            case (.any, _), (.integer, .int?), (.number, .int?), (.number, .double?), (.string, .string?),
                 (.bool, .bool?), (.array, .array?), (.object, .object?): true
            default: false
            }
        }
    }

    public struct Field: Sendable, Hashable {
        public let name: String
        public let kind: Kind
        /// Left out of some lines of the type.
        public let optional: Bool
    }

    /// The `type` of its lines; never renamed (an old run folder must still read). A stored literal: writing or
    /// matching it costs what the literal did.
    public let name: String
    public let roles: [Role]
    public let fields: [Field]
    /// Its lines may carry more fields than `fields` (the new settings of `fault.set`, a step's own fields).
    public let open: Bool
    public let meaning: String
    /// `name` as a JSON string, quotes included, rendered once: what every line of the type writes after `"type":`.
    public let quoted: Quoted

    /// An event type's name as its lines spell it. A hot emitter keeps one (`EventCatalogue.hintAccepted.quoted`) and
    /// emits with it: copying the whole `EventType` out of the catalogue for every line costs more than the line.
    public struct Quoted: Sendable, Hashable {
        /// `"name"`, quotes included.
        public let bytes: [UInt8]
    }

    public var description: String { name }

    /// `fields` as words: `name` (a string), `name:i` (integer), `:n` (number), `:b`, `:a` (array), `:o` (object),
    /// `:*` (any); a trailing `?` marks it optional.
    init(_ name: String, _ roles: [Role], _ fields: String, open: Bool = false, _ meaning: String) {
        self.name = name
        self.roles = roles
        self.open = open
        self.meaning = meaning
        var quoted: [UInt8] = []
        JSONValue.writeString(name, to: &quoted)
        self.quoted = Quoted(bytes: quoted)
        self.fields = fields.split(separator: " ").map { word in
            let optional = word.hasSuffix("?")
            let bare = optional ? word.dropLast() : word[...]
            let parts = bare.split(separator: ":", maxSplits: 1)
            let kinds: [Substring: Kind] = [
                "i": .integer, "n": .number, "s": .string, "b": .bool, "a": .array, "o": .object, "*": .any,
            ]
            let kind = parts.count == 2 ? kinds[parts[1]] ?? .any : .string
            return Field(name: String(parts[0]), kind: kind, optional: optional)
        }
    }

    /// `case EventCatalogue.opApplied:` in a switch over an event's type.
    public static func ~= (pattern: EventType, type: String) -> Bool { pattern.name == type }

    /// `event.type == EventCatalogue.opApplied` outside a switch.
    public static func == (type: String, pattern: EventType) -> Bool { pattern.name == type }
    public static func != (type: String, pattern: EventType) -> Bool { pattern.name != type }
}

extension EventType {
    /// The catalogue's event of that name.
    public static func named(_ name: String) -> EventType? { byName[name] }

    static let byName: [String: EventType] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
}
