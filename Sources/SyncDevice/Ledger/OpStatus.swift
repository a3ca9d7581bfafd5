/// What a user would see for one op (seed 001): one word per state instead of "syncing" for everything.
public enum OpStatus: String, Sendable, CaseIterable, Codable {
    /// Committed to the ledger; not yet tried.
    case savedOnDevice
    /// Tried before and waiting for its next attempt (transient failure, backoff).
    case waitingToSend
    /// Claimed by a pass under a lease and sent, or about to be.
    case sending
    /// Sent, outcome unknown (timeout, cut-off, crash): it is resent later with the same key.
    case confirmationDelayed
    /// The server applied it (or had already applied it).
    case completed
    /// The server refused it for good, or it ran out of attempts; `last_error` says why.
    case needsAttention

    /// Not yet settled: a pass still has work to do for it.
    public var isPending: Bool { self != .completed && self != .needsAttention }
}
