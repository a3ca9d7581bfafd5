import SyncProtocol

/// A local edit the ledger has just committed (op and replica in one transaction).
public struct SavedEdit: Sendable, Equatable {
    public var key: String
    public var draft: String
    public var action: DraftAction
    public var base: Int
    /// The replica's row of the draft just before the edit (nil: the device had none): what the user read as they
    /// began it. The `edit` answer carries it as `saw`.
    public var before: DraftRow? = nil
}
