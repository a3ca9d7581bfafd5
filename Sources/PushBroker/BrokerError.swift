/// Errors of the broker: a bad configuration at start, a bad control argument at run time.
public enum BrokerError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A configuration file or flag is wrong (exit 2).
    case config(String)
    /// A control argument is out of bounds (answered with `ok: false`).
    case invalid(String)

    public var description: String {
        switch self {
        case .config(let text), .invalid(let text): return text
        }
    }
}
