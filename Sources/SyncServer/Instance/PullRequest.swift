import SyncProtocol

/// A pull the instance accepted for the store, always for the device's own account.
public struct PullRequest: Sendable, Equatable {
    public var peer: Peer
    public var req: Int
    public var device: String
    public var account: String
    public var cursor: Int
    public var limit: Int
    /// Set when the page answers a push that asked for it (`Push.cursor`): the push's results, sent with the page in
    /// one `pushResult`.
    public var pushResults: [OpResult]?

    public init(peer: Peer, req: Int, device: String, account: String, cursor: Int, limit: Int) {
        self.peer = peer
        self.req = req
        self.device = device
        self.account = account
        self.cursor = cursor
        self.limit = limit
    }
}
