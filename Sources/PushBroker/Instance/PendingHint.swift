import SyncProtocol

/// A hint the broker accepted and has not settled yet, with the simulated second it was accepted (to report how long
/// it waited once it is delivered). Kept as numbers (`ref`); the id is spelled only when something writes it.
public struct PendingHint: Sendable, Equatable {
    public var ref: HintRef
    public var account: String
    public var acceptedAt: Double
    /// The notice brought a new draft (a change at version 1): what an app shows as a notification
    /// (`fcmPriority: "visible"` sends it at high priority).
    public var newDraft = false

    public init(ref: HintRef, account: String, acceptedAt: Double) {
        self.ref = ref
        self.account = account
        self.acceptedAt = acceptedAt
    }

    /// `h-<number>`.
    public var id: String { ref.id }

    /// The hint as the wire spells it.
    public var hint: Hint { Hint(hint: ref.id, account: account, head: ref.head) }
}
