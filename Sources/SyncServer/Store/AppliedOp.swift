import SyncProtocol

/// How the store settled one op of a push: the result to send back, the change it recorded (only when `applied`),
/// and whether the key was already known (a replay returns the original result and changes nothing).
public struct AppliedOp: Sendable, Equatable {
    public var result: OpResult
    public var change: Change?
    public var replay: Bool
    /// The switch `idempotency: false` applied a key the server already knew: the second apply of one intent.
    public var reapplied = false

    public init(result: OpResult, change: Change? = nil, replay: Bool = false, reapplied: Bool = false) {
        self.result = result
        self.change = change
        self.replay = replay
        self.reapplied = reapplied
    }
}
