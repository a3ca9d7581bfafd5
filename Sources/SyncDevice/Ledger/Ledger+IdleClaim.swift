extension Ledger {
    /// The claim of a pass that begins with it (`ClaimRequest.beginsPass`) on a ledger with no unsettled op: nothing
    /// can be reclaimed (a lease is only held by an op in `sending`) and nothing claimed, so the answer is an empty,
    /// deferred claim read without a write transaction (no write lock, no commit), and without a read either while
    /// the last one found none and nothing was saved since (`knownIdle`). Nil when there is an unsettled op: then
    /// `claim` must run.
    public func idleClaim(_ request: ClaimRequest) throws -> ClaimResult? {
        guard request.beginsPass != nil, case .pass = request.purpose else { return nil }
        if !knownIdle {
            let unsettled = try database.scalarInt("""
                SELECT EXISTS(SELECT 1 FROM ops WHERE status NOT IN ('completed', 'needsAttention'))
                """) ?? 1
            knownIdle = unsettled == 0
        }
        guard knownIdle else { return nil }
        return ClaimResult(purpose: request.purpose, ops: [], reclaimed: 0, stranded: 0, passDeferred: true)
    }
}
