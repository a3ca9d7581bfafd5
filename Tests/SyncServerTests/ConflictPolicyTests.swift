import LabTestSupport
import SyncProtocol
import Testing

@testable import SyncServer

@Suite("ConflictPolicy")
struct ConflictPolicyTests {
    let live = DraftState(title: "T", body: "B", version: 4, lastWriter: "pixel", deleted: false)
    let tombstone = DraftState(title: "", body: "", version: 5, lastWriter: "pixel", deleted: true)

    @Test("an update on the current version applies without conflict and keeps fields it leaves out")
    func updateOnCurrentVersion() {
        let op = Op(key: "k", draft: "d", action: .update, base: 4, body: "new")
        let expected = DraftState(title: "T", body: "new", version: 5, lastWriter: "iphone", deleted: false)
        #expect(ConflictPolicy.resolve(op, current: live, device: "iphone")
            == .write(expected, action: .update, conflict: false))
    }

    @Test("an update on an older version still applies, last writer wins, marked as a conflict")
    func staleUpdateIsConflict() {
        let op = Op(key: "k", draft: "d", action: .update, base: 2, title: "mine", body: "mine")
        let expected = DraftState(title: "mine", body: "mine", version: 5, lastWriter: "iphone", deleted: false)
        #expect(ConflictPolicy.resolve(op, current: live, device: "iphone")
            == .write(expected, action: .update, conflict: true))
    }

    @Test("an update of an unknown draft creates it; a create of an existing draft is an update")
    func createAndUpdateSwap() {
        let update = Op(key: "k", draft: "d", action: .update, base: 0, title: "x")
        #expect(ConflictPolicy.resolve(update, current: nil, device: "a")
            == .write(DraftState(title: "x", body: "", version: 1, lastWriter: "a", deleted: false),
                      action: .create, conflict: false))
        let create = Op(key: "k", draft: "d", action: .create, base: 0, body: "y")
        #expect(ConflictPolicy.resolve(create, current: live, device: "a")
            == .write(DraftState(title: "T", body: "y", version: 5, lastWriter: "a", deleted: false),
                      action: .update, conflict: true))
    }

    @Test("delete: of a live draft writes a tombstone; of an unknown or deleted draft is refused")
    func deletes() {
        let delete = Op(key: "k", draft: "d", action: .delete, base: 4)
        #expect(ConflictPolicy.resolve(delete, current: live, device: "a")
            == .write(DraftState(title: "", body: "", version: 5, lastWriter: "a", deleted: true),
                      action: .delete, conflict: false))
        #expect(ConflictPolicy.resolve(delete, current: nil, device: "a") == .reject(reason: "unknown draft \"d\""))
        #expect(ConflictPolicy.resolve(delete, current: tombstone, device: "a")
            == .reject(reason: "unknown draft \"d\""))
    }

    @Test("an edit of a deleted draft brings it back with a newer version; a conflict unless it saw the delete")
    func editAfterDelete() {
        let late = Op(key: "k", draft: "d", action: .update, base: 4, body: "late")
        #expect(ConflictPolicy.resolve(late, current: tombstone, device: "a")
            == .write(DraftState(title: "", body: "late", version: 6, lastWriter: "a", deleted: false),
                      action: .create, conflict: true))
        let informed = Op(key: "k", draft: "d", action: .create, base: 5, title: "again")
        #expect(ConflictPolicy.resolve(informed, current: tombstone, device: "a")
            == .write(DraftState(title: "again", body: "", version: 6, lastWriter: "a", deleted: false),
                      action: .create, conflict: false))
    }

    @Test("sizes at the limit apply; one byte over is refused as too large")
    func sizeLimits() {
        let title = String(repeating: "t", count: Limits.maxTitleBytes)
        let body = String(repeating: "é", count: Limits.maxDraftBodyBytes / 2)  // two bytes each
        let atLimit = Op(key: "k", draft: "d", action: .create, base: 0, title: title, body: body)
        guard case .write = ConflictPolicy.resolve(atLimit, current: nil, device: "a") else {
            Issue.record("an op at the limits must apply")
            return
        }
        let over = Op(key: "k", draft: "d", action: .create, base: 0, title: title, body: body + "x")
        #expect(ConflictPolicy.resolve(over, current: nil, device: "a")
            == .reject(reason: "too large: body is \(Limits.maxDraftBodyBytes + 1) bytes, "
                + "limit \(Limits.maxDraftBodyBytes)"))
    }
}
