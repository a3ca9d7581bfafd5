import SyncProtocol

/// A device the server knows: which account it belongs to and the token it must present in `hello`.
public struct DeviceRecord: Sendable, Equatable, Codable {
    public var id: String
    public var account: String
    public var platform: Platform
    public var token: String

    public init(id: String, account: String, platform: Platform, token: String) {
        self.id = id
        self.account = account
        self.platform = platform
        self.token = token
    }
}
