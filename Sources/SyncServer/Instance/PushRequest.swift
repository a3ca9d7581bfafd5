import SyncProtocol

/// A push the instance accepted for the store: who sent it, its ops and the ops the fault plan refuses.
public struct PushRequest: Sendable, Equatable {
    public var peer: Peer
    public var req: Int
    public var device: String
    public var account: String
    public var ops: [Op]
    public var injectRejections: Set<Int>
    /// `idempotency` switch: false applies a known key again.
    public var idempotency = true
    /// The fault plan fails this push's commit (after the ops were decided): nothing is applied.
    public var failCommit = false
    /// The page the push asked for with its results (`Push.cursor`, `Push.limit`): read after the commit.
    public var page: PageAsk?

    /// Where a push's page starts and how many changes it holds at most, as a pull's `cursor` and `limit`.
    public struct PageAsk: Sendable, Equatable {
        public var cursor: Int
        public var limit: Int
    }

    public init(peer: Peer, req: Int, device: String, account: String, ops: [Op], injectRejections: Set<Int> = []) {
        self.peer = peer
        self.req = req
        self.device = device
        self.account = account
        self.ops = ops
        self.injectRejections = injectRejections
    }
}
