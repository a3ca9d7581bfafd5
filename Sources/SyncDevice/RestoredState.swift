/// What the ledger remembered across a restart.
public struct RestoredState: Sendable, Equatable {
    public var cursor: Int
    public var head: Int
    public var nextPassID: Int
    /// End times of successful passes, oldest first (the guarantee's measured gaps, the freshness).
    public var successTimes: [Double]

    public init(cursor: Int = 0, head: Int = 0, nextPassID: Int = 1, successTimes: [Double] = []) {
        self.cursor = cursor
        self.head = head
        self.nextPassID = nextPassID
        self.successTimes = successTimes
    }
}
