import SyncProtocol

/// A page to apply: changes `from+1 … to`, contiguous, in order.
public struct PageApplication: Sendable, Equatable {
    public var changes: [Change]
    public var from: Int
    public var to: Int
    public var pass: Int
    /// `cursorCommit: beforePage`: the cursor was already committed at `to` on its own; the page must find it there.
    public var cursorCommitted = false

    public init(changes: [Change], from: Int, to: Int, pass: Int, cursorCommitted: Bool = false) {
        self.changes = changes
        self.from = from
        self.to = to
        self.pass = pass
        self.cursorCommitted = cursorCommitted
    }
}
