import LabKit

/// What a pool process is started with: each device's own configuration (without a control socket of its own) and
/// the pool's control endpoint, events file and name.
public struct DevicePoolConfiguration: Sendable {
    public var devices: [DeviceConfiguration]
    public var controlEndpoint: String?
    public var eventsPath: String?
    /// The `proc` of the pool's own events (each device writes its own as its id).
    public var name: String
    public var clock: SimClock
    /// CURVE: the pool's secret key file (its control socket) and the launcher's public key file, the only key
    /// that socket admits. nil: NULL.
    public var keyFile: String?
    public var launcherKeyFile: String?

    public init(devices: [DeviceConfiguration], controlEndpoint: String?, eventsPath: String?, name: String,
                clock: SimClock) {
        self.devices = devices
        self.controlEndpoint = controlEndpoint
        self.eventsPath = eventsPath
        self.name = name
        self.clock = clock
    }
}
