import SyncProtocol

/// One event to write: a type of the catalogue (`EventType`, docs/ARCHITECTURE.md) and its fields, in order. Every
/// role's instance hands its events to its shell as these (`DeviceDirective.log`, `ServerDirective.log`,
/// `BrokerDirective.log`); `EventLog` and the simulation's log write them.
public struct EventLine: Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var fields: [(String, JSONValue)]

    public init(_ type: String, _ fields: [(String, JSONValue)] = []) {
        self.type = type
        self.fields = fields
    }

    /// An event of the catalogue (`EventLine(.opApplied, …)`): its name, as written.
    public init(_ type: EventType, _ fields: [(String, JSONValue)] = []) {
        self.type = type.name
        self.fields = fields
    }

    public static func == (lhs: EventLine, rhs: EventLine) -> Bool {
        lhs.type == rhs.type && JSONValue.object(lhs.fields) == JSONValue.object(rhs.fields)
    }

    /// The value of field `name`, if the event has it.
    public subscript(name: String) -> JSONValue? { fields.first(where: { $0.0 == name })?.1 }

    public var description: String { "\(type) \(JSONValue.object(fields))" }
}
