import LabKit
import SQLite
import SyncProtocol

/// Everything a device process is started with: who it is, where its database and peers are, the run's clock and
/// seed, and its settings.
public struct DeviceConfiguration: Sendable {
    public var identity: DeviceIdentity
    public var settings: DeviceSettings
    public var databasePath: String
    public var serverEndpoint: String
    /// nil: no broker, so no hints (the device still syncs from every other trigger).
    public var brokerEndpoint: String?
    public var controlEndpoint: String?
    public var eventsPath: String?
    /// The `proc` of its events.
    public var name: String
    public var clock: SimClock
    public var seed: UInt64
    public var synchronous: Synchronous
    /// Crash points armed from the start (`--crash-at`), with the occurrence each fires on.
    public var crashAt: [ArmedCrash] = []
    /// CURVE (docs/SECURITY.md): nil runs every socket with NULL.
    public var keys: DeviceKeyFiles?

    public init(identity: DeviceIdentity, settings: DeviceSettings, databasePath: String, serverEndpoint: String,
                brokerEndpoint: String? = nil, controlEndpoint: String? = nil, eventsPath: String? = nil,
                name: String? = nil, clock: SimClock, seed: UInt64 = 1, synchronous: Synchronous = .normal,
                keys: DeviceKeyFiles? = nil) {
        self.keys = keys
        self.identity = identity
        self.settings = settings
        self.databasePath = databasePath
        self.serverEndpoint = serverEndpoint
        self.brokerEndpoint = brokerEndpoint
        self.controlEndpoint = controlEndpoint
        self.eventsPath = eventsPath
        self.name = name ?? identity.device
        self.clock = clock
        self.seed = seed
        self.synchronous = synchronous
    }
}
