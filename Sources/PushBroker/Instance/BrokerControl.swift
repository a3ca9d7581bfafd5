import SyncProtocol

/// A control command for the broker, parsed once: `BrokerInstance` decides each with an exhaustive switch, as the
/// device does with `DeviceControl`.
public enum BrokerControl: Sendable, Equatable {
    case ping
    case stop
    case stats
    /// Changes the chaos: the arguments are the broker's runtime knobs, `device` and `off` (`ChaosChange.parse`).
    case chaos([String: JSONValue])
    /// Arms (or, with `off`, disarms) a crash point: the driver, which owns the crash points, carries it out
    /// (`BrokerDirective.armCrash`), then the instance answers (`onCrashArmed`).
    case crashAt([String: JSONValue])

    /// The command `control` names; nil for one the broker does not know.
    public static func parse(_ control: Control) -> BrokerControl? {
        switch control.command {
        case "ping": return .ping
        case "stop": return .stop
        case "stats": return .stats
        case "chaos": return .chaos(control.args)
        case "crashAt": return .crashAt(control.args)
        default: return nil
        }
    }
}
