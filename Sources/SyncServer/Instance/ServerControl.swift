import SyncProtocol

/// A control command for the server, parsed once: `ServerInstance.onControlMessage` decides each with an
/// exhaustive switch, as the device does with `DeviceControl`.
public enum ServerControl: Sendable, Equatable {
    case ping
    case stats
    case stop
    /// Changes the fault plan: the arguments are the server's runtime knobs (`ServerFaults.updated(with:)`).
    case faults([String: JSONValue])
    /// Adds a device to the directory and the database.
    case addDevice([String: JSONValue])
    /// Arms (or, with `off`, disarms) a crash point: the arguments are `CrashPoints.control`'s; the driver, which
    /// owns the crash points, carries it out (`ServerDirective.armCrash`).
    case crashAt([String: JSONValue])

    /// The command `control` names; nil for one the server does not know.
    public static func parse(_ control: Control) -> ServerControl? {
        switch control.command {
        case "ping": return .ping
        case "stats": return .stats
        case "stop": return .stop
        case "faults": return .faults(control.args)
        case "addDevice": return .addDevice(control.args)
        case "crashAt": return .crashAt(control.args)
        default: return nil
        }
    }
}
