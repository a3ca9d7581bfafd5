import SyncProtocol

/// One event to write: a type from docs/ARCHITECTURE.md and its fields, in order.
public struct LogLine: Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var fields: [(String, JSONValue)]

    public init(_ type: String, _ fields: [(String, JSONValue)] = []) {
        self.type = type
        self.fields = fields
    }

    public static func == (lhs: LogLine, rhs: LogLine) -> Bool {
        lhs.type == rhs.type && JSONValue.object(lhs.fields) == JSONValue.object(rhs.fields)
    }

    public subscript(field: String) -> JSONValue? { fields.first(where: { $0.0 == field })?.1 }

    public var description: String { "\(type) \(JSONValue.object(fields))" }
}
