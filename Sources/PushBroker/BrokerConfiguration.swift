import LabKit

/// Everything `synclab-broker` is started with (see `BrokerCommand` for the flags and their defaults).
public struct BrokerConfiguration: Sendable, Equatable {
    /// How the server's notices arrive.
    public enum NoticesMode: String, Sendable, CaseIterable {
        /// PUSH → PULL: nothing is lost between server and broker; a full pipe makes the server wait.
        case pull
        /// PUB → SUB: ZeroMQ drops notices past the high-water mark and before the subscription is up (natural loss).
        case sub
    }

    /// Device ROUTER endpoint (bind).
    public var listen: String
    /// Notices endpoint (bind).
    public var notices: String
    public var noticesMode: NoticesMode = .pull
    /// Receive high-water mark of the notices socket, in messages.
    public var noticesHWM: Int32 = 1000
    /// Send high-water mark of the device ROUTER, per device, in messages; a hint past it is dropped (`hwm`).
    public var hintHWM: Int32 = 1000
    public var accountsPath: String
    /// Control ROUTER endpoint (bind), if any.
    public var control: String?
    /// Event log path, if any.
    public var events: String?
    public var name = "broker"
    /// Simulated time 0 in wall µs; nil: when the process starts.
    public var epochMicros: Int64?
    public var timeScale: Double = 1
    public var seed: UInt64 = 1
    public var profiles = ProfileSettings()
    public var chaos = ChaosSettings.off
    public var reorderWindowSec: Double = 60
    /// Design switch (issue 13): hints carry the notice's change data (`changes: [{seq, draft, version}]`) instead
    /// of only `{hint, account, head}`. Off is the lab's design: "push is a hint" (seed 001).
    public var hintCarriesData = false
    /// The accounts `hintCarriesData` applies to; nil: all.
    public var hintDataAccounts: Set<String>?
    /// Crash points armed from the start (`--crash-at`), with the occurrence each fires on.
    public var crashAt: [ArmedCrash] = []
    /// CURVE (docs/SECURITY.md): the broker's secret key file; nil: NULL on every socket.
    public var keyFile: String?
    /// The launcher's public key file: the only key the control socket admits.
    public var launcherKeyFile: String?
    /// The server's public key file: the only key the notices socket admits.
    public var serverKeyFile: String?

    public init(listen: String, notices: String, accountsPath: String) {
        self.listen = listen
        self.notices = notices
        self.accountsPath = accountsPath
    }
}
