import LabKit
import SQLite

/// Everything `synclab-server` is started with.
public struct ServerConfiguration: Sendable {
    /// How head-moved notices leave the server.
    public enum NotifyMode: String, Sendable, CaseIterable {
        /// A PUSH socket: a notice that would block (no broker, queue full) is dropped and logged.
        case push
        /// A PUB socket: libzmq drops what a slow or absent subscriber cannot take, silently ("natural loss").
        case pub
    }

    public var databasePath: String
    public var listen: String
    public var notify: String?
    public var notifyMode: NotifyMode = .push
    public var notifyHighWaterMark: Int = 1000
    public var accountsPath: String?
    public var control: String?
    public var eventsPath: String?
    public var name: String = "server"
    /// Wall µs of simulated time 0; nil: when the process starts.
    public var epochMicros: Int64?
    public var timeScale: Double = 1
    public var seed: UInt64 = 1
    public var faults: ServerFaults = .off
    /// The design switches (issue 13); the default is the lab's design.
    public var switches: ServerSwitches = .correct
    /// WAL with `normal`: a commit survives the process being killed at any moment (the lab's faults); only a power
    /// cut or OS crash could roll back the last commits. `full` adds an fsync to every commit (docs/PERFORMANCE.md).
    public var synchronous: Synchronous = .normal
    /// Crash points armed from the start (`--crash-at`), with the occurrence each fires on.
    public var crashAt: [ArmedCrash] = []
    /// CURVE (docs/SECURITY.md): this server's secret key file; nil: every socket uses NULL (no security).
    public var keyFile: String?
    /// The launcher's public key file: the only key the control socket admits (required with `keyFile`).
    public var launcherKeyFile: String?
    /// The broker's public key file, for the notice socket's CURVE handshake (required with `keyFile` and `notify`).
    public var brokerKeyFile: String?

    public init(databasePath: String, listen: String) {
        self.databasePath = databasePath
        self.listen = listen
    }
}
