/// An op as the ledger holds it.
public struct StoredOp: Sendable, Equatable {
    public var key: String
    public var status: OpStatus
    public var attempts: Int
    public var nextAttemptSim: Double
    public var leaseOwner: String?
    public var leaseExpiresSim: Double?
    public var lastError: String?
    public var resultSeq: Int?
}
