import SyncProtocol

/// What the operating system knows about the device right now: the inputs every platform model reads.
public struct DeviceEnvironment: Sendable, Equatable {
    /// foreground, background (iOS/Android suspended; web: tab hidden), forceQuit (iOS force quit, Android force
    /// stop), closed (app not running; web: tab closed).
    public var app: AppState
    public var online: Bool
    public var charging: Bool
    public var opensPerDay: Double
    /// iOS Background App Refresh switch.
    public var refreshOn: Bool

    public init(app: AppState, online: Bool = true, charging: Bool = false, opensPerDay: Double = 3,
                refreshOn: Bool = true) {
        self.app = app
        self.online = online
        self.charging = charging
        self.opensPerDay = opensPerDay
        self.refreshOn = refreshOn
    }

    public var isForeground: Bool { app == .foreground }
}
