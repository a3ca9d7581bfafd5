/// How a pass ended.
public struct PassRecord: Sendable, Equatable {
    public var id: Int
    public var trigger: Trigger
    public var started: Double
    public var ended: Double
    public var outcome: PassOutcome
    public var sent: Int
    public var pulled: Int
    public var cutOff: Bool
    /// It reached the server's head without being cut off: the data is fresh as of `ended`.
    public var success: Bool
    public var cursor: Int
    public var head: Int
    /// The next run the scheduler wants (seed 001: "record the next desired run").
    public var nextDesired: Double?

    public init(id: Int, trigger: Trigger, started: Double, ended: Double, outcome: PassOutcome, sent: Int, pulled: Int,
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

/// How a pass ended (the `outcome` of `pass.ended` and of the ledger's `passes` row).
public enum PassOutcome: String, Sendable, CaseIterable {
    /// It ran to the end: pushed what it claimed and pulled to the head it saw.
    case completed
    /// The platform took its window away before the end (an expired iOS task, a closed web page).
    case cutOff
    /// A request got no reply in time.
    case timeout
    /// The server could not be reached.
    case unreachable
    /// The device went offline during the pass.
    case offline
    /// The server refused a request (its session, or its body).
    case refused
    /// The ledger failed a step.
    case error
    /// The process was killed by the platform (a force-quit) during the pass.
    case killed
    /// The process stopped cleanly during the pass.
    case stopped
    /// The process died during the pass; the ledger wrote this when it next opened (`Ledger.prepare`).
    case interrupted
}

/// A row of the ledger's `passes` table: what a pass was started by and how it ended (nil outcome while it runs).
public struct PassRow: Sendable, Equatable {
    public var id: Int
    public var trigger: Trigger
    public var started: Double
    /// nil while it runs.
    public var ended: Double?
    public var outcome: PassOutcome?
    public var sent: Int
    public var pulled: Int
    public var cutOff: Bool
    public var success: Bool
}
