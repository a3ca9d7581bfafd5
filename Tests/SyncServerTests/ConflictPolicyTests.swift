import LabTestSupport
import SyncProtocol
import Testing

@testable import SyncServer

@Suite("ConflictPolicy")
struct ConflictPolicyTests {
    let live = DraftState(title: "T", body: "B", version: 4, lastWriter: "pixel", deleted: false)
    let tombstone = DraftState(title: "", body: "", version: 5, lastWriter: "pixel", deleted: true)

    /// An op on draft "d" made on version `base`.
    func op(_ action: DraftAction, base: Int, title: String? = nil, body: String? = nil) -> Op {
        Op(key: "k", draft: "d", action: action, base: base, title: title, body: body)
    }

    /// What the policy decides for `op` from `device` on the draft's `current` state.
    func resolve(_ op: Op, on current: DraftState?, by device: String = "a") -> ConflictPolicy.Resolution {
        ConflictPolicy.resolve(op, current: current, device: device)
    }

    /// A write of the draft's new state (last writer `device`) as a change of `action`.
    func write(_ title: String, _ body: String, version: Int, by device: String = "a", deleted: Bool = false,
               as action: DraftAction, conflict: Bool) -> ConflictPolicy.Resolution {
        .write(DraftState(title: title, body: body, version: version, lastWriter: device, deleted: deleted),
               action: action, conflict: conflict)
    }

    @Test("an update on the current version applies without conflict and keeps fields it leaves out")
    func updateOnCurrentVersion() {
        #expect(resolve(op(.update, base: 4, body: "new"), on: live, by: "iphone")
            == write("T", "new", version: 5, by: "iphone", as: .update, conflict: false))
    }

    @Test("an update on an older version still applies, last writer wins, marked as a conflict")
    func staleUpdateIsConflict() {
        #expect(resolve(op(.update, base: 2, title: "mine", body: "mine"), on: live, by: "iphone")
            == write("mine", "mine", version: 5, by: "iphone", as: .update, conflict: true))
    }

    @Test("an update of an unknown draft creates it; a create of an existing draft is an update")
    func createAndUpdateSwap() {
        #expect(resolve(op(.update, base: 0, title: "x"), on: nil)
            == write("x", "", version: 1, as: .create, conflict: false))
        #expect(resolve(op(.create, base: 0, body: "y"), on: live)
            == write("T", "y", version: 5, as: .update, conflict: true))
    }

    @Test("delete: of a live draft writes a tombstone; of an unknown or deleted draft is refused")
    func deletes() {
        let delete = op(.delete, base: 4)
        #expect(resolve(delete, on: live) == write("", "", version: 5, deleted: true, as: .delete, conflict: false))
        #expect(resolve(delete, on: nil) == .reject(reason: "unknown draft \"d\""))
        #expect(resolve(delete, on: tombstone) == .reject(reason: "unknown draft \"d\""))
    }

    @Test("an edit of a deleted draft brings it back with a newer version; a conflict unless it saw the delete")
    func editAfterDelete() {
        #expect(resolve(op(.update, base: 4, body: "late"), on: tombstone)
            == write("", "late", version: 6, as: .create, conflict: true))
        #expect(resolve(op(.create, base: 5, title: "again"), on: tombstone)
            == write("again", "", version: 6, as: .create, conflict: false))
    }

    @Test("sizes at the limit apply; one byte over is refused as too large")
    func sizeLimits() {
        let title = String(repeating: "t", count: Limits.maxTitleBytes)
        let body = String(repeating: "é", count: Limits.maxDraftBodyBytes / 2)  // two bytes each
        let atLimit = op(.create, base: 0, title: title, body: body)
        guard case .write = resolve(atLimit, on: nil) else {
            Issue.record("an op at the limits must apply")
            return
        }
        let over = op(.create, base: 0, title: title, body: body + "x")
        #expect(resolve(over, on: nil) == .reject(reason: "too large: body is \(Limits.maxDraftBodyBytes + 1) bytes, "
                + "limit \(Limits.maxDraftBodyBytes)"))
    }
}
