import SyncProtocol

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
