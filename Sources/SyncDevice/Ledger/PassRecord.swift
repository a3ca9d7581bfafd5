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
