import LabKit

/// Everything `synclab-server` is started with: where it listens and keeps its files, the flags every lab process
/// takes (`process`) and its settings (`settings`, the table a topology's `server: {…}` maps onto).
public struct ServerConfiguration: Sendable {
    public var databasePath: String
    public var listen: String
    public var notify: String?
    public var accountsPath: String?
    /// Control socket, events, name, clock, seed, crash points and its own CURVE keys.
    public var process = ProcessFlags()
    public var settings = ServerSettings()
    /// The broker's public key file, for the notice socket's CURVE handshake (required with `process.keyFile` and
    /// `notify`).
    public var brokerKeyFile: String?

    /// The `proc` of its events.
    public var name: String { process.name ?? "server" }

    public init(databasePath: String, listen: String) {
        self.databasePath = databasePath
        self.listen = listen
    }
}
