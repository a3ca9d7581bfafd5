import SyncProtocol

/// Who a device is.
public struct DeviceIdentity: Sendable, Equatable {
    public var device: String
    public var account: String
    public var token: String
    public var platform: Platform

    public init(device: String, account: String, token: String, platform: Platform) {
        self.device = device
        self.account = account
        self.token = token
        self.platform = platform
    }
}
