/// A replica row.
public struct DraftRow: Sendable, Equatable {
    public var id: String
    public var title: String?
    public var body: String?
    public var version: Int
    public var deleted: Bool
}
