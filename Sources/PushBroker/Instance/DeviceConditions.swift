import SyncProtocol

/// What the push service knows about a device, as its OS would report it: the fields of `deviceState`.
public struct DeviceConditions: Sendable, Equatable {
    public var online: Bool
    public var app: AppState
    /// Android doze, iOS low-power mode.
    public var doze: Bool
    /// iOS Background App Refresh switched off by the user.
    public var refreshOff: Bool

    public init(online: Bool = true, app: AppState = .background, doze: Bool = false, refreshOff: Bool = false) {
        self.online = online
        self.app = app
        self.doze = doze
        self.refreshOff = refreshOff
    }

    public init(_ state: DeviceState) {
        self.init(online: state.online, app: state.app, doze: state.doze, refreshOff: state.refreshOff)
    }

    /// A freshly registered device is connected (it just talked to us), with its app in the background, until its
    /// first `deviceState` says otherwise.
    public static let registered = DeviceConditions()

    public var isForeground: Bool { app == .foreground }
}
