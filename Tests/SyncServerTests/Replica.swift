import LabTestSupport
import SyncProtocol

/// A device replica for the tests: applies changes in seq order the way every device must.
struct Replica {
    struct Draft: Equatable {
        var title: String
        var body: String
        var version: Int
        var deleted: Bool
    }

    var drafts: [String: Draft] = [:]
    var cursor = 0

    mutating func apply(_ changes: [Change]) {
        for change in changes where change.seq > cursor {
            drafts[change.draft] = Draft(title: change.title ?? "", body: change.body ?? "", version: change.version,
                                         deleted: change.action == .delete)
            cursor = change.seq
        }
    }
}
