import SyncProtocol

/// One line for the event log: its type and its fields, in order.
public struct ServerEvent: Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var fields: [(String, JSONValue)]

    public init(_ type: String, _ fields: [(String, JSONValue)] = []) {
        self.type = type
        self.fields = fields
    }

    public static func == (lhs: ServerEvent, rhs: ServerEvent) -> Bool {
        lhs.type == rhs.type && JSONValue.object(lhs.fields) == JSONValue.object(rhs.fields)
    }

    /// The value of field `name`, if the event has it.
    public subscript(name: String) -> JSONValue? { fields.first(where: { $0.0 == name })?.1 }

    public var description: String { "\(type) \(JSONValue.object(fields))" }
}
