/// A draft as the server holds it. A deleted draft stays as a tombstone so its version keeps growing if it is
/// written again, and so a late update of it is recognised as a conflict.
public struct DraftState: Sendable, Equatable {
    public var title: String
    public var body: String
    public var version: Int
    public var lastWriter: String
    public var deleted: Bool

    public init(title: String, body: String, version: Int, lastWriter: String, deleted: Bool) {
        self.title = title
        self.body = body
        self.version = version
        self.lastWriter = lastWriter
        self.deleted = deleted
    }
}
