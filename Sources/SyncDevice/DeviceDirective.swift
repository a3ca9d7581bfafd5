import SyncProtocol

/// What the device's pure logic asks its shell to do, in order. The shell carries each out with an exhaustive
/// `switch`; a directive that touches the ledger is one transaction.
public enum DeviceDirective: Sendable, Equatable {
    /// Send on the DEALER to the server.
    case sendToServer(Message)
    /// Send on the DEALER to the broker.
    case sendToBroker(Message)
    /// Record that pass `id` started (a row in `passes`).
    case beginPass(id: Int, trigger: Trigger, at: Double)
    /// Reclaim expired leases and claim a bounded batch, in one transaction; then hand the result to
    /// `DeviceInstance.onClaimed`.
    case claim(ClaimRequest)
    /// Record each op's outcome, in one transaction.
    case recordOutcomes([OpOutcome], at: Double)
    /// Apply a page to the replica and move the cursor, in ONE transaction.
    case applyPage(PageApplication)
    /// Record how pass `id` ended, the head last seen and the next desired run.
    case endPass(PassRecord)
    /// Remember how old the data was when the user opened the app (a seed-001 metric).
    case recordAppOpen(at: Double, dataAge: Double?)
    /// Acknowledge the `sync` control requests waiting on the pass that just ended.
    case answerSync(tokens: [Int])
    /// Write an event (after everything before it in the list has been carried out).
    case log(LogLine)
}

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

    public init(purpose: ClaimPurpose, limit: Int, now: Double, leaseSec: Double, ignoreBackoff: Bool) {
        self.purpose = purpose
        self.limit = limit
        self.now = now
        self.leaseSec = leaseSec
        self.ignoreBackoff = ignoreBackoff
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

/// How one op's attempt ended (seed 001's four results).
public struct OpOutcome: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The server applied it now or before (`seq` of its change).
        case acknowledged(seq: Int?)
        /// No answer (timeout, cut-off, lost connection): `confirmationDelayed`, resent at `retryAt` with its key.
        case unknown(retryAt: Double, reason: String)
        /// Transient: `waitingToSend` until `at`.
        case retry(at: Double, reason: String)
        /// Permanent: `needsAttention`.
        case needsAttention(reason: String)
    }

    public var key: String
    public var kind: Kind

    public init(key: String, kind: Kind) {
        self.key = key
        self.kind = kind
    }

    /// The `outcome` field of `op.result`.
    public var name: String {
        switch kind {
        case .acknowledged: return "acknowledged"
        case .unknown: return "unknown"
        case .retry: return "retry"
        case .needsAttention: return "needsAttention"
        }
    }
}

/// A page to apply: changes `from+1 … to`, contiguous, in order.
public struct PageApplication: Sendable, Equatable {
    public var changes: [Change]
    public var from: Int
    public var to: Int
    public var pass: Int

    public init(changes: [Change], from: Int, to: Int, pass: Int) {
        self.changes = changes
        self.from = from
        self.to = to
        self.pass = pass
    }
}

/// How a pass ended.
public struct PassRecord: Sendable, Equatable {
    public var id: Int
    public var trigger: Trigger
    public var started: Double
    public var ended: Double
    /// completed, cutOff, timeout, unreachable, offline, refused, error, killed.
    public var outcome: String
    public var sent: Int
    public var pulled: Int
    public var cutOff: Bool
    /// It reached the server's head without being cut off: the data is fresh as of `ended`.
    public var success: Bool
    public var cursor: Int
    public var head: Int
    /// The next run the scheduler wants (seed 001: "record the next desired run").
    public var nextDesired: Double?

    public init(id: Int, trigger: Trigger, started: Double, ended: Double, outcome: String, sent: Int, pulled: Int,
                cutOff: Bool, success: Bool, cursor: Int, head: Int, nextDesired: Double?) {
        self.id = id
        self.trigger = trigger
        self.started = started
        self.ended = ended
        self.outcome = outcome
        self.sent = sent
        self.pulled = pulled
        self.cutOff = cutOff
        self.success = success
        self.cursor = cursor
        self.head = head
        self.nextDesired = nextDesired
    }
}
