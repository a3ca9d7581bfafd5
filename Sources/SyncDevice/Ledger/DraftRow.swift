/// A replica row.
public struct DraftRow: Sendable, Equatable {
    public var id: String
    public var title: String?
    public var body: String?
    public var version: Int
    public var deleted: Bool

    public init(id: String, title: String?, body: String?, version: Int, deleted: Bool) {
        self.id = id
        self.title = title
        self.body = body
        self.version = version
        self.deleted = deleted
    }
}
