import SyncProtocol

/// A hint the broker accepted and has not settled yet, with the simulated second it was accepted (to report how long
/// it waited once it is delivered).
public struct PendingHint: Sendable, Equatable {
    public var hint: Hint
    public var acceptedAt: Double
    /// The notice brought a new draft (a change at version 1): what an app shows as a notification
    /// (`fcmPriority: "visible"` sends it at high priority).
    public var newDraft = false

    public var id: String { hint.hint }
}
