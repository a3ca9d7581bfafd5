/// An authenticated connection: the device that said hello with a valid token on one routing id.
public struct Session: Sendable, Equatable {
    public var device: String
    public var account: String
    /// When it was last used, in messages handled, so the least recently used session is the one forgotten.
    var lastUse: UInt64

    public init(device: String, account: String, lastUse: UInt64 = 0) {
        self.device = device
        self.account = account
        self.lastUse = lastUse
    }
}
