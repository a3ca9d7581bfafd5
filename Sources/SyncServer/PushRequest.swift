import SyncProtocol

/// A push the instance accepted for the store: who sent it, its ops and the ops the fault plan refuses.
public struct PushRequest: Sendable, Equatable {
    public var peer: Peer
    public var req: Int
    public var device: String
    public var account: String
    public var ops: [Op]
    public var injectRejections: Set<Int>

    public init(peer: Peer, req: Int, device: String, account: String, ops: [Op], injectRejections: Set<Int> = []) {
        self.peer = peer
        self.req = req
        self.device = device
        self.account = account
        self.ops = ops
        self.injectRejections = injectRejections
    }
}
