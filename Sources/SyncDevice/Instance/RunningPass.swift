/// One pass in flight: which step it is in and what it has done so far.
public struct RunningPass: Sendable, Equatable {
    /// The step the pass waits in. Each waiting step has a deadline (the reply timeout, in simulated seconds).
    public enum Phase: Sendable, Equatable {
        /// Waiting for `welcome`; then `then`.
        case hello(deadline: Double, then: Step)
        /// The shell is claiming a batch (synchronously).
        case claiming
        case pushing(req: Int, deadline: Double)
        case pulling(req: Int, deadline: Double)
    }

    public enum Step: Sendable, Equatable {
        case claim, push, pull
    }

    public var id: Int
    public var trigger: Trigger
    public var started: Double
    /// When the platform's execution limit ends the pass (nil: no limit).
    public var deadline: Double?
    public var phase: Phase
    /// Ops sent in this pass.
    public var sent = 0
    /// Changes applied in this pass.
    public var pulled = 0
    public var pages = 0
    /// Ops claimed and not yet settled: what an expiration must release.
    public var claimed: [ClaimedOp] = []
    /// A `notAuthenticated` reply was answered with a new hello once already.
    public var reHelloed = false
    /// The batch was full or the page budget ran out: more work is waiting.
    public var workRemains = false
    /// The pull reached the head the server reported.
    public var reachedHead = false
    /// `sync` requests to answer when the pass ends.
    public var tokens: [Int]
    /// Claim ops in backoff too (forced sync).
    public var ignoreBackoff: Bool
    /// Execution charged so far for the work done (ops sent, pages applied: `opCostSec`, `pageCostSec`).
    public var charged: Double = 0
    /// The pass's row is in the ledger's transaction under way or committed. False after a claim that found
    /// nothing (`ClaimResult.passDeferred`): the row is then written with the pass's first page or its end.
    public var recorded = true
    /// `cursorCommit: beforePage`: the page whose cursor is already committed, applied once its cost has run
    /// (`due`, simulated). A kill before then loses it.
    public var pendingPage: PendingPage?
    /// `pageCommit: atPassEnd`: the pages pulled and worked through, to be applied only when the pass ends; a pass
    /// cut off before its end applies none of them.
    public var heldPages: [PageApplication] = []

    /// A page waiting to be applied after its cursor was committed.
    public struct PendingPage: Sendable, Equatable {
        public var page: PageApplication
        public var due: Double
        public var head: Int
    }

    public init(id: Int, trigger: Trigger, started: Double, deadline: Double?, tokens: [Int], ignoreBackoff: Bool) {
        self.id = id
        self.trigger = trigger
        self.started = started
        self.deadline = deadline
        self.phase = .claiming
        self.tokens = tokens
        self.ignoreBackoff = ignoreBackoff
    }
}
