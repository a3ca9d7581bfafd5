import LabKit
import SyncProtocol
import SyncServer

/// The order checks (issue 30): no check before these compared the server's drafts with the order in which each user
/// made their edits, so a device that sent its outbox newest first left the server with the user's older text, and
/// every invariant held.
extension InvariantChecks {
    // MARK: - monotonic-writes

    /// Per device and draft, the server applied the device's ops in the order the user saved them (the first
    /// application of each key; a second one is exactly-once's). Terry et al.'s monotonic writes, per draft: the
    /// lab's design holds back a draft's later op while an earlier one of the same draft is in backoff, but lets an
    /// op of another draft pass it, and the conflict rule never relates two drafts.
    static func monotonicWrites(_ data: RunData, _ intent: Intent, _ rank: [String: Int]) -> InvariantResult {
        let name = "monotonic-writes"
        if let unreadable = unreadable(name, data) { return unreadable }
        var violations: [Violation] = []
        var reported: Set<String> = []
        var latest: [String: (rank: Int, key: String, seq: Int)] = [:]
        var applied: Set<String> = []
        var judged = 0
        for change in data.changes {
            guard let op = intent.opByKey[change.key], let mine = rank[change.key],
                  applied.insert(change.key).inserted else { continue }
            judged += 1
            let slot = op.device + "\u{1}" + change.draft
            guard let before = latest[slot] else {
                latest[slot] = (mine, change.key, change.seq)
                continue
            }
            if before.rank < mine {
                latest[slot] = (mine, change.key, change.seq)
            } else if reported.insert(slot).inserted, let earlier = intent.opByKey[before.key] {
                violations.append(Violation(device: op.device, account: op.account,
                    "\(op.device) saved \(describe(op)) before \(describe(earlier)), but the server applied "
                        + "\(earlier.key) at seq \(before.seq) and \(op.key) only after it, at seq \(change.seq): "
                        + "draft \(change.draft)'s writes went out of the order the user made them"))
            }
        }
        return InvariantResult(name, violations,
            held: "\(judged) applied ops, each device's writes to each draft in the order they were saved")
    }

    // MARK: - intent

    /// Each draft's final value on the server is what the conflict rule (docs/PROTOCOL.md, "Conflicts": server
    /// arrival order, last writer wins) gives from the users' saved edits: the first application of every saved key
    /// in the server's order, except that each device's own edits of the draft take their places in the order the
    /// user saved them, with the content the launcher asked for (the change's own content for an edit it has no
    /// record of). An apply under a key no user saved (a resend under a new key, a second apply of a key) is not an
    /// edit of the user's: when it decides the final value, this fails.
    static func intent(_ data: RunData, _ intent: Intent, _ rank: [String: Int]) -> InvariantResult {
        let name = "intent"
        if let unreadable = unreadable(name, data) { return unreadable }
        let content = intent.content(data)
        var violations: [Violation] = []
        var judged = 0
        for (account, changes) in Dictionary(grouping: data.changes, by: \.account).sorted(by: { $0.key < $1.key }) {
            let drafts = Dictionary((data.server.drafts[account] ?? []).map { ($0.id, $0) },
                                    uniquingKeysWith: { a, _ in a })
            var applied: Set<String> = []
            var edits: [String: [ServerSnapshot.ChangeRow]] = [:]  // each draft's first applies of saved keys
            var last: [String: ServerSnapshot.ChangeRow] = [:]
            for change in changes {
                last[change.draft] = change
                guard intent.opByKey[change.key] != nil, applied.insert(change.key).inserted else { continue }
                edits[change.draft, default: []].append(change)
            }
            for (draft, applies) in edits.sorted(by: { $0.key < $1.key }) {
                judged += 1
                let ordered = inSaveOrder(applies, intent, rank)
                var state: DraftState?
                var decisive: ServerSnapshot.ChangeRow?
                for change in ordered {
                    let op = content[change.key].map {
                        Op(key: change.key, draft: draft, action: $0.action, base: 0, title: $0.title, body: $0.body)
                    } ?? Op(key: change.key, draft: draft, action: change.action, base: 0,
                            title: change.title, body: change.body)
                    if case .write(let next, _, _) = ConflictPolicy.resolve(op, current: state, device: change.origin) {
                        state = next
                        decisive = change
                    }
                }
                let server = drafts[draft]
                let want = state.map { $0.deleted ? "deleted" : quote($0.title, $0.body) } ?? "absent"
                let have = server.map { $0.deleted ? "deleted" : quote($0.title, $0.body) } ?? "absent"
                guard want != have, let decisive else { continue }
                let ended = last[draft] ?? decisive
                let saved = intent.opByKey[decisive.key].map(describe) ?? decisive.key
                var text = "draft \(draft) of \(account) ends \(have) on the server, but the users' edits in the order "
                    + "each device saved them give \(want): the last is \(saved)"
                if ended.key != decisive.key {
                    let what = intent.opByKey[ended.key].map(describe) ?? "\(ended.key), which no user saved as such"
                    text += "; the server's last change of it, seq \(ended.seq), applied \(what)"
                }
                violations.append(Violation(device: ended.origin, account: account, text))
            }
        }
        return InvariantResult(name, violations,
            held: "\(judged) drafts end as the users' saved edits, in each device's order, give them")
    }

    /// `applies` (in the server's order) with each device's own entries put in the order the device saved them.
    private static func inSaveOrder(_ applies: [ServerSnapshot.ChangeRow], _ intent: Intent,
                                    _ rank: [String: Int]) -> [ServerSnapshot.ChangeRow] {
        var slots: [String: [Int]] = [:]
        for (index, change) in applies.enumerated() {
            slots[intent.opByKey[change.key]?.device ?? change.origin, default: []].append(index)
        }
        var ordered = applies
        for (_, indices) in slots {
            let mine = indices.map { applies[$0] }.sorted { (rank[$0.key] ?? 0) < (rank[$1.key] ?? 0) }
            for (slot, change) in zip(indices, mine) { ordered[slot] = change }
        }
        return ordered
    }

    private static func describe(_ op: Intent.SavedOp) -> String {
        "\(op.key) (\(op.action) \(op.draft), saved on \(op.device) at \(formatSim(op.savedSim)))"
    }

    private static func quote(_ title: String, _ body: String) -> String {
        body.isEmpty ? "\"\(title)\"" : "\"\(title)\" / \"\(body.prefix(40))\""
    }
}

extension Intent {
    /// Each saved op's place among its device's ops: by the time it was saved (the ledger's `saved_wall` where the
    /// ledger still holds it, else its event's or the launcher's record's time), then the ledger's `local_seq`. A
    /// device saves one edit after another; the events alone will not do, as a killed process loses the events it
    /// had not written yet, and its ops are then known from the ledger only.
    func saveOrder(_ data: RunData) -> [String: Int] {
        let keyed = ops.enumerated().map { index, op -> (key: String, sim: Double, local: Int, index: Int) in
            let row = ledgerRow[op.key]
            return (op.key, row.map { data.simTime(wall: $0.savedWall) } ?? op.savedSim, row?.localSeq ?? 0, index)
        }
        let sorted = keyed.sorted { ($0.sim, $0.local, $0.index) < ($1.sim, $1.local, $1.index) }
        var rank: [String: Int] = [:]
        for (place, op) in sorted.enumerated() { rank[op.key] = place }
        return rank
    }

    /// What the user asked each edit to write: the launcher's `scenario.action` record of it (run folders written
    /// before it carried `title` and `body` have none, and the change's own content stands in).
    func content(_ data: RunData) -> [String: (action: DraftAction, title: String?, body: String?)] {
        var content: [String: (action: DraftAction, title: String?, body: String?)] = [:]
        for event in data.events where event.proc == "launcher" && event.type == EventCatalogue.scenarioAction {
            guard event.string("action") == "edit", let key = event.string("key"),
                  let action = event.string("op").flatMap(DraftAction.init(rawValue:)) else { continue }
            guard action == .delete || event["title"] != nil || event["body"] != nil else { continue }
            content[key] = (action, event.string("title"), event.string("body"))
        }
        return content
    }
}
