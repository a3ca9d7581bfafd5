import SyncProtocol

/// What a claim returned.
public struct ClaimResult: Sendable, Equatable {
    public var purpose: ClaimPurpose
    public var ops: [ClaimedOp]
    /// Leases that had expired and were reclaimed first.
    public var reclaimed: Int
    /// Ops left `sending` with no lease at all (`leases` off): nothing will ever reclaim them.
    public var stranded: Int
    /// The request `beginsPass`, but the claim found nothing to change and wrote nothing, not even the pass's row:
    /// the pass records its start with its first write (its first page, or its end).
    public var passDeferred: Bool

    public init(purpose: ClaimPurpose, ops: [ClaimedOp], reclaimed: Int, stranded: Int = 0,
                passDeferred: Bool = false) {
        self.purpose = purpose
        self.ops = ops
        self.reclaimed = reclaimed
        self.stranded = stranded
        self.passDeferred = passDeferred
    }
}

/// An op a claim handed out, with the attempt number this send is. `op.key` is the key sent; `key` is the op's key
/// in the ledger, the same unless `keyPerAttempt` gave this attempt a new one.
public struct ClaimedOp: Sendable, Equatable {
    public var op: Op
    public var attempt: Int
    public var key: String

    public init(op: Op, attempt: Int, key: String? = nil) {
        self.op = op
        self.attempt = attempt
        self.key = key ?? op.key
    }
}
