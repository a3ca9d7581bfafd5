import LabKit
import SyncProtocol

/// What every `hint.accepted` of one notice says about the notice, `origin` and `seqs`, with its event fields
/// rendered once for all of the notice's hints. Shared by reference among them.
public final class NoticeFields: Sendable, Equatable {
    public let origin: String
    public let seqs: JSONValue
    /// `,"origin":"<origin>","seqs":[…]`.
    let fields: EventFragment

    public init(origin: String, seqs: JSONValue) {
        self.origin = origin
        self.seqs = seqs
        fields = EventFragment([("origin", .string(origin)), ("seqs", seqs)])
    }

    public static func == (lhs: NoticeFields, rhs: NoticeFields) -> Bool {
        lhs.origin == rhs.origin && lhs.seqs == rhs.seqs
    }
}
