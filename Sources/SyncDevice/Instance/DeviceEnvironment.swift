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
    /// Android: the screen is on while the app is not in the foreground (the user is in other apps), so the phone
    /// is not idle and does not doze; the app's standby bucket still applies.
    public var screenOn: Bool

    public init(app: AppState, online: Bool = true, charging: Bool = false, opensPerDay: Double = 3,
                refreshOn: Bool = true, screenOn: Bool = false) {
        self.app = app
        self.online = online
        self.charging = charging
        self.opensPerDay = opensPerDay
        self.refreshOn = refreshOn
        self.screenOn = screenOn
    }

    public var isForeground: Bool { app == .foreground }
}
