/// An authenticated connection: the device that said hello on one routing id, over one connection, with the key
/// (ZAP user id) that connection authenticated with. A message is in the session only when all three match, so a
/// client that presents another connection's routing id gains nothing.
public struct Session: Sendable, Equatable {
    public var device: String
    public var account: String
    /// When it was last used, in messages handled, so the least recently used session is the one forgotten.
    var lastUse: UInt64
    /// The ZAP user id of the connection that said hello (nil under NULL).
    public var user: String?
    /// The file descriptor of that connection (-1 unknown).
    public var connection: Int32

    public init(device: String, account: String, lastUse: UInt64 = 0, user: String? = nil, connection: Int32 = -1) {
        self.device = device
        self.account = account
        self.lastUse = lastUse
        self.user = user
        self.connection = connection
    }
}
