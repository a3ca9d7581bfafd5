import LabKit

/// Everything `synclab-broker` is started with (see `BrokerCommand` for the flags): where it listens, the flags
/// every lab process takes (`process`) and its settings (`settings`, the table a topology's `broker: {…}` maps onto).
public struct BrokerConfiguration: Sendable, Equatable {
    /// Device ROUTER endpoint (bind).
    public var listen: String
    /// Notices endpoint (bind).
    public var notices: String
    public var accountsPath: String
    /// Control socket, events, name, clock, seed, crash points and its own CURVE keys.
    public var process = ProcessFlags()
    public var settings = BrokerSettings()
    /// The server's public key file: the only key the notices socket admits.
    public var serverKeyFile: String?

    /// The `proc` of its events.
    public var name: String { process.name ?? "broker" }

    public init(listen: String, notices: String, accountsPath: String) {
        self.listen = listen
        self.notices = notices
        self.accountsPath = accountsPath
    }
}
