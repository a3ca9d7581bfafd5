import SyncProtocol

/// What a claim returned.
public struct ClaimResult: Sendable, Equatable {
    public var purpose: ClaimPurpose
    public var ops: [ClaimedOp]
    /// Leases that had expired and were reclaimed first.
    public var reclaimed: Int

    public init(purpose: ClaimPurpose, ops: [ClaimedOp], reclaimed: Int) {
        self.purpose = purpose
        self.ops = ops
        self.reclaimed = reclaimed
    }
}

/// An op a claim handed out, with the attempt number this send is.
public struct ClaimedOp: Sendable, Equatable {
    public var op: Op
    public var attempt: Int

    public init(op: Op, attempt: Int) {
        self.op = op
        self.attempt = attempt
    }
}
