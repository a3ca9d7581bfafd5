import SyncProtocol

/// A hint the broker accepted and has not settled yet, with the simulated second it was accepted (to report how long
/// it waited once it is delivered).
public struct PendingHint: Sendable, Equatable {
    public var hint: Hint
    public var acceptedAt: Double

    public var id: String { hint.hint }
}
