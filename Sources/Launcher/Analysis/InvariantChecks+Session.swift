import LabKit
import SyncProtocol
import SyncServer

/// Read your writes (issue 30; Terry et al.'s session guarantee): what a user reads on a device includes every write
/// they made there. The observation is the launcher's: each `edit` answer carries `saw`, the draft as the replica
/// showed it when the edit began (`Ledger.save` reads it in the edit's own transaction), and the launcher records it in
/// the step's `scenario.action`. A device's self-report of its cursor or its ops is not used.
extension InvariantChecks {
    /// One field of a draft as a device showed it, and the own edit that must show in it.
    private struct Expectation {
        let edit: Intent.SavedOp
        let value: String?
    }

    /// For every recorded read of a draft on a device: each field the device's own earlier edits set (since its last
    /// reinstall) shows that edit's value, or the value of a change the server applied after that edit (a later
    /// write, which the device may have pulled); and the draft is deleted exactly when the device's last edit of it
    /// deleted it, or a later change says otherwise. Edits the device gave up (needsAttention, a queue lost with its
    /// process) are no-lost-edit's to judge, not this check's.
    static func readYourWrites(_ data: RunData, _ intent: Intent, dropped: Set<String>) -> InvariantResult {
        let name = "read-your-writes"
        if let unreadable = unreadable(name, data) { return unreadable }
        let content = intent.content(data)
        var changes: [String: [ServerSnapshot.ChangeRow]] = [:]
        for change in data.changes { changes[change.account + "\u{1}" + change.draft, default: []].append(change) }
        var firstSeq: [String: Int] = [:]
        for change in data.changes {
            // A resend under a renewed key (`key~N`) is still the user's edit.
            let key = change.key.split(separator: "~", maxSplits: 1).first.map(String.init) ?? change.key
            firstSeq[key] = min(firstSeq[key] ?? .max, change.seq)
        }
        var title: [String: Expectation] = [:], body: [String: Expectation] = [:]
        var last: [String: Intent.SavedOp] = [:]
        var violations: [Violation] = []
        var reported: Set<String> = [], gaveUp: Set<String> = []
        var reads = 0
        for event in data.events where event.proc == "launcher" && event.type == EventCatalogue.scenarioAction {
            guard let device = event.string("target") else { continue }
            if event.string("action") == "reinstall" {
                for slot in Set(last.keys).union(gaveUp) where slot.hasPrefix(device + "\u{1}") {
                    gaveUp.remove(slot)
                    title[slot] = nil
                    body[slot] = nil
                    last[slot] = nil
                }
                continue
            }
            guard event.string("action") == "edit", let key = event.string("key"),
                  let op = intent.opByKey[key] else { continue }
            let slot = device + "\u{1}" + op.draft
            if let saw = event["saw"], let mine = last[slot], !gaveUp.contains(slot) {
                reads += 1
                let account = op.account ?? ""
                let later = changes[account + "\u{1}" + op.draft] ?? []
                let problem = judge(saw, own: mine, title: title[slot], body: body[slot], later: later,
                                    seq: { firstSeq[$0.key] ?? .max })
                if let problem, reported.insert(slot).inserted {
                    violations.append(Violation(device: device, account: op.account,
                        "\(device) began \(key) (\(op.action) \(op.draft)) at \(formatSim(event.sim)) and read "
                            + problem))
                }
            }
            guard !dropped.contains(key) else {
                // While it was pending the replica showed it, after that not: neither read can be held against it.
                gaveUp.insert(slot)
                continue
            }
            let wrote = content[key]
            last[slot] = op
            switch wrote?.action ?? DraftAction(rawValue: op.action) ?? .update {
            case .create:
                title[slot] = Expectation(edit: op, value: wrote?.title)
                body[slot] = Expectation(edit: op, value: wrote?.body)
            case .update:
                if let value = wrote?.title { title[slot] = Expectation(edit: op, value: value) }
                if let value = wrote?.body { body[slot] = Expectation(edit: op, value: value) }
            case .delete:
                break
            }
        }
        let held = reads == 0
            ? "no read to judge: no device began an edit of a draft it had written (run folders from before edits "
                + "carried what the user saw have none)"
            : "\(reads) \(reads == 1 ? "read" : "reads") of a draft the device had written, each showing the device's "
                + "own writes"
        return InvariantResult(name, violations, held: held)
    }

    // MARK: - monotonic-reads

    /// Per device and draft, a read never shows an older state than an earlier read did (Terry et al.'s monotonic
    /// reads). The replica's version of a draft is the server's version in the shadow plus one per own op replayed
    /// on it: a pulled page raises the first by at least what it takes from the second, and an own edit adds one,
    /// so on the lab's design it never goes down. A draft with an op the device gave up on or the server refused
    /// (which leaves the replica by design), and everything before a reinstall, is not judged.
    static func monotonicReads(_ data: RunData, _ intent: Intent, dropped: Set<String>) -> InvariantResult {
        let name = "monotonic-reads"
        if let unreadable = unreadable(name, data) { return unreadable }
        var seen: [String: (version: Int, key: String, sim: Double)] = [:]
        var gaveUp: Set<String> = [], reported: Set<String> = []
        var violations: [Violation] = []
        var reads = 0
        for event in data.events where event.proc == "launcher" && event.type == EventCatalogue.scenarioAction {
            guard let device = event.string("target") else { continue }
            if event.string("action") == "reinstall" {
                for slot in Set(seen.keys).union(gaveUp) where slot.hasPrefix(device + "\u{1}") {
                    seen[slot] = nil
                    gaveUp.remove(slot)
                }
                continue
            }
            guard event.string("action") == "edit", let key = event.string("key"), let op = intent.opByKey[key],
                  let saw = event["saw"] else { continue }
            let slot = device + "\u{1}" + op.draft
            if dropped.contains(key) { gaveUp.insert(slot) }
            guard !gaveUp.contains(slot) else { continue }
            // A read from before `saw` carried the version says nothing; no draft at all is below any version.
            let version: Int
            if case .object = saw {
                guard let shown = saw["version"]?.intValue else { continue }
                version = shown
            } else {
                version = 0
            }
            if let before = seen[slot] {
                reads += 1
                if version < before.version, reported.insert(slot).inserted {
                    violations.append(Violation(device: device, account: op.account,
                        "\(device) read draft \(op.draft) at version \(version) when it began \(key) at "
                            + "\(formatSim(event.sim)), though it had shown version \(before.version) once it saved "
                            + "\(before.key) at \(formatSim(before.sim)): its reads went back"))
                }
            }
            // The edit's own op is replayed on what it read: the next read is at least one version on.
            seen[slot] = (max(version, seen[slot]?.version ?? 0) + 1, key, event.sim)
        }
        return InvariantResult(name, violations,
            held: reads == 0 ? "no read to judge: no device began two edits of one draft"
                : "\(reads) \(reads == 1 ? "read" : "reads") of a draft, none older than the device's read before it")
    }

    /// What is wrong with `saw`, or nil: the device's last own edit `own`, the edits that last set each field, and
    /// the server's changes of the draft (in seq order) with `seq` giving an own edit's first application.
    private static func judge(_ saw: JSONValue, own: Intent.SavedOp, title: Expectation?, body: Expectation?,
                              later: [ServerSnapshot.ChangeRow], seq: (Intent.SavedOp) -> Int) -> String? {
        guard case .object = saw else {
            return "no draft at all, though its own \(own.key) (\(own.action), saved at \(formatSim(own.savedSim))) "
                + "wrote it: the replica lost the user's write"
        }
        let deleted = saw["deleted"]?.boolValue ?? false
        let after = later.filter { $0.seq > seq(own) }
        if deleted != (own.action == "delete") && !after.contains(where: { ($0.action == .delete) == deleted }) {
            return "it \(deleted ? "deleted" : "not deleted"), though its own last edit \(own.key) "
                + "(\(own.action), saved at \(formatSim(own.savedSim))) \(deleted ? "kept" : "deleted") it and no "
                + "later change on the server \(deleted ? "deleted" : "restored") it"
        }
        guard !deleted else { return nil }
        for (field, expected) in [("title", title), ("body", body)] {
            guard let expected else { continue }
            // A change carries the draft's whole state after it, and the server keeps an absent field as "".
            let shown = saw[field]?.stringValue ?? ""
            guard shown != expected.value ?? "" else { continue }
            let applied = seq(expected.edit)
            let overwritten = later.contains { change in
                change.seq > applied && change.action != .delete
                    && (field == "title" ? change.title : change.body) ?? "" == shown
            }
            guard !overwritten else { continue }
            let at = applied == .max ? "not applied yet" : "applied at seq \(applied)"
            return "its \(field) as \(show(shown)), though its own \(expected.edit.key) (saved at "
                + "\(formatSim(expected.edit.savedSim)), \(at)) set it to \(show(expected.value)) and no change the "
                + "server applied after it wrote \(show(shown)): the replica hid the user's own write"
        }
        return nil
    }

    /// Keys the device gave up or the server refused: a refusal it recorded (needsAttention), one the server recorded
    /// (`rejected`), an in-memory queue it lost. A draft with one is not judged again until a reinstall (no-lost-edit
    /// judges the loss).
    static func droppedKeys(_ data: RunData, _ intent: Intent) -> Set<String> {
        var keys = Set(intent.ledgerRow.values.filter { $0.status == .needsAttention }.map(\.key))
        // A key the server refused durably: a device that keeps retrying it (`retryPermanent`) shows it over its
        // later, applied writes; that is the refusal's story, told by no-lost-edit and convergence.
        for op in intent.ops where data.server.keys[op.key]?.outcome == .rejected { keys.insert(op.key) }
        for event in data.events where event.type == EventCatalogue.queueLost {
            for key in event["keys"]?.arrayValue ?? [] { if let key = key.stringValue { keys.insert(key) } }
        }
        return keys
    }

    private static func show(_ value: String?) -> String {
        guard let value, !value.isEmpty else { return "empty" }
        return "\"\(value.prefix(40))\""
    }
}
