import SyncProtocol

/// A local edit the ledger has just committed (op and replica in one transaction).
public struct SavedEdit: Sendable, Equatable {
    public var key: String
    public var draft: String
    public var action: DraftAction
    public var base: Int
}
