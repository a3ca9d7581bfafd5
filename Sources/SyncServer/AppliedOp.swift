import SyncProtocol

/// How the store settled one op of a push: the result to send back, the change it recorded (only when `applied`),
/// and whether the key was already known (a replay returns the original result and changes nothing).
public struct AppliedOp: Sendable, Equatable {
    public var result: OpResult
    public var change: Change?
    public var replay: Bool

    public init(result: OpResult, change: Change? = nil, replay: Bool = false) {
        self.result = result
        self.change = change
        self.replay = replay
    }
}
