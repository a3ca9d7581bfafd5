/// What the ledger remembered across a restart.
public struct RestoredState: Sendable, Equatable {
    public var cursor: Int
    public var head: Int
    public var nextPassID: Int
    /// End times of successful passes, oldest first (the freshness).
    public var successTimes: [Double]
    /// Start times of the passes the platform scheduler ran (periodic, opportunistic, interval), oldest first.
    public var scheduledRuns: [Double]
    /// `opQueue: memory`: the keys of the unsettled ops the restart lost (they lived only in memory).
    public var lostOps: [String] = []

    public init(cursor: Int = 0, head: Int = 0, nextPassID: Int = 1, successTimes: [Double] = [],
                scheduledRuns: [Double] = [], lostOps: [String] = []) {
        self.lostOps = lostOps
        self.cursor = cursor
        self.head = head
        self.nextPassID = nextPassID
        self.successTimes = successTimes
        self.scheduledRuns = scheduledRuns
    }
}
