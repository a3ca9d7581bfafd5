/// Why a claim is made.
public enum ClaimPurpose: Sendable, Equatable {
    /// The send step of pass `id`.
    case pass(Int)
    /// The web page's best-effort flush when its tab closes (`sendBeacon`).
    case beacon
}

/// A bounded claim of eligible ops under a lease.
public struct ClaimRequest: Sendable, Equatable {
    public var purpose: ClaimPurpose
    public var limit: Int
    public var now: Double
    /// The lease lasts until `now + leaseSec`.
    public var leaseSec: Double
    /// Claim ops still in backoff too (a forced `sync`).
    public var ignoreBackoff: Bool
    /// When set, the claim also records the start of pass `purpose` (with this trigger, at `now`) in its own
    /// transaction: a pass that goes straight to its claim costs one commit, not two, before its first send; and
    /// none when the claim finds nothing (`ClaimResult.passDeferred`).
    public var beginsPass: Trigger?
    /// `leases` off: the claim marks ops `sending` with no expiry.
    public var leases = true
    /// `keyPerAttempt`: an op sent before gets a new idempotency key for this attempt.
    public var renewKeys = false
    /// `outboxOrder: newestFirst`: the newest eligible ops first (the switch's mistake).
    public var newestFirst = false

    public init(purpose: ClaimPurpose, limit: Int, now: Double, leaseSec: Double, ignoreBackoff: Bool,
                beginsPass: Trigger? = nil) {
        self.purpose = purpose
        self.limit = limit
        self.now = now
        self.leaseSec = leaseSec
        self.ignoreBackoff = ignoreBackoff
        self.beginsPass = beginsPass
    }
}
