import SyncProtocol

/// The server's one deterministic rule for applying an op to a draft (docs/PROTOCOL.md, "Conflicts").
///
/// Ops apply in server arrival order and the last writer wins. An op made on an older version than the draft's
/// current one still applies, but its change is marked `conflict`: nothing is merged, so every replica that applies
/// the changes in seq order ends with the same draft.
public enum ConflictPolicy {
    /// What applying one op does.
    public enum Resolution: Sendable, Equatable {
        /// Write `state`; the change records `action` (what happened to the draft, which may differ from what the op
        /// asked: an update of an unknown draft creates it) and whether the op overrode a version it had not seen.
        case write(DraftState, action: DraftAction, conflict: Bool)
        /// A permanent refusal: resending the op will not help.
        case reject(reason: String)
    }

    /// Applies `op` by `device` to `current` (nil: the account never had this draft).
    public static func resolve(_ op: Op, current: DraftState?, device: String) -> Resolution {
        if let title = op.title, title.utf8.count > Limits.maxTitleBytes {
            return .reject(reason: "too large: title is \(title.utf8.count) bytes, limit \(Limits.maxTitleBytes)")
        }
        if let body = op.body, body.utf8.count > Limits.maxDraftBodyBytes {
            return .reject(reason: "too large: body is \(body.utf8.count) bytes, limit \(Limits.maxDraftBodyBytes)")
        }
        let live = current.flatMap { $0.deleted ? nil : $0 }
        let currentVersion = current?.version ?? 0
        // A tombstone counts: an edit made before a delete it had not seen is a conflict, and the edit wins.
        let conflict = current != nil && op.base < currentVersion
        switch op.action {
        case .delete:
            guard live != nil else { return .reject(reason: "unknown draft \"\(op.draft)\"") }
            let state = DraftState(title: "", body: "", version: currentVersion + 1, lastWriter: device, deleted: true)
            return .write(state, action: .delete, conflict: conflict)
        case .create, .update:
            // Fields an op leaves out keep their current value; a new draft starts empty.
            let state = DraftState(
                title: op.title ?? live?.title ?? "",
                body: op.body ?? live?.body ?? "",
                version: currentVersion + 1,
                lastWriter: device,
                deleted: false
            )
            return .write(state, action: live == nil ? .create : .update, conflict: conflict)
        }
    }
}
