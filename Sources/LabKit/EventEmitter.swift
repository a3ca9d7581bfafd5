import SyncProtocol

/// Anything that writes events: `EventLog`, the roles' IO protocols (`DeviceIO`, `ServerIO`, `BrokerIO`), the
/// launcher's runners. Its one requirement takes the type's name as written; emitters call the typed overload with a
/// catalogue value (`io.emit(.processStarted, …)`), so no emitter spells a name of its own (`EventEmitterTests`).
public protocol EventEmitter: AnyObject {
    func emit(_ type: String, _ fields: [(String, JSONValue)])
}

extension EventEmitter {
    /// Writes an event of the catalogue: its name, as written, and `fields` in order.
    public func emit(_ type: EventType, _ fields: [(String, JSONValue)] = []) {
        emit(type.name, fields)
    }
}
