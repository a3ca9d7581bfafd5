import SyncProtocol

/// A device the server knows: which account it belongs to and the token it must present in `hello`.
public struct DeviceRecord: Sendable, Equatable, Codable {
    public var id: String
    public var account: String
    public var platform: Platform
    public var token: String
    /// Its CURVE public key (Z85), when the accounts file or `addDevice` names one; the ZAP handler admits it.
    public var publicKey: String?

    public init(id: String, account: String, platform: Platform, token: String, publicKey: String? = nil) {
        self.id = id
        self.account = account
        self.platform = platform
        self.token = token
        self.publicKey = publicKey
    }
}
