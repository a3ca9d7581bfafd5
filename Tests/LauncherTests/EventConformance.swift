import LabKit
import SyncProtocol

/// Holds an `events.jsonl` to the event catalogue: every line parses, its type is a catalogue type, each field the
/// type lists has the catalogue's kind, required fields are there, and only an open type carries fields it does not
/// list. The catalogue's kinds are otherwise only words in `EventType`; this is what ties them to what the roles
/// really write (issue 25).
enum EventConformance {
    /// The fields every line has, before the type's own (`EventLog`).
    static let envelope: [(String, EventType.Kind)] = [
        ("wall", .integer), ("sim", .number), ("proc", .string), ("type", .string),
    ]

    /// One sentence per way the lines break the catalogue (type, field), named with the first line that does, at
    /// most `limit`: a field wrong on every line of its type is said once.
    static func problems(in events: String, limit: Int = 40) -> [String] {
        var out: [String] = []
        var seen: Set<String> = []
        for (index, line) in events.split(separator: "\n").enumerated() where out.count < limit {
            for problem in problems(line: String(line)) where seen.insert(problem).inserted {
                out.append("line \(index + 1): \(problem)")
            }
        }
        return Array(out.prefix(limit))
    }

    static func problems(line: String) -> [String] {
        guard let value = try? JSONValue.parse(line), case .object(let pairs) = value else {
            return ["not a JSON object"]
        }
        var out: [String] = []
        let fields = Dictionary(pairs, uniquingKeysWith: { a, _ in a })
        for (name, kind) in envelope where !kind.matches(fields[name]) {
            out.append("\(name) is missing or not of kind \(kind.rawValue)")
        }
        guard let typeName = fields["type"]?.stringValue else { return out }
        guard let type = EventType.named(typeName) else { return out + ["unknown type \(typeName)"] }
        for field in type.fields {
            guard let found = fields[field.name] else {
                if !field.optional { out.append("\(typeName) lacks \(field.name)") }
                continue
            }
            if !field.kind.matches(found) {
                out.append("\(typeName).\(field.name) is not of kind \(field.kind.rawValue)")
            }
        }
        if !type.open {
            let known = Set(envelope.map(\.0) + type.fields.map(\.name))
            for (name, _) in pairs where !known.contains(name) {
                out.append("\(typeName) has \(name), which the catalogue does not list")
            }
        }
        return out
    }
}
