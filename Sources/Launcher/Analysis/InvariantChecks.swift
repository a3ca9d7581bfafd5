import LabKit
import SyncDevice
import SyncProtocol
import SyncServer

/// The sync invariants (docs/INVARIANTS.md gives each one's exact definition). The databases are the authority: what
/// the server and each device durably hold at the end is read through `ServerSnapshot` and `LedgerSnapshot`; the
/// events say what was intended (the launcher's record of each edit it asked for, the devices' `op.saved`) and explain
/// when and why.
enum InvariantChecks {
    static let names = ["no-lost-edit", "exactly-once", "monotonic-writes", "intent", "read-your-writes",
                        "monotonic-reads", "convergence", "cursor-safety", "hints-are-references", "hints-accounted",
                        "open-reaches-head", "quiesce-settles"]

    static func all(_ data: RunData) -> [InvariantResult] {
        let intent = Intent(data)
        let order = intent.saveOrder(data)
        // What the devices gave up on or the server refused: both read checks leave those drafts out.
        let dropped = droppedKeys(data, intent)
        return [noLostEdit(data, intent), exactlyOnce(data, intent), monotonicWrites(data, intent, order),
                self.intent(data, intent, order), readYourWrites(data, intent, dropped: dropped),
                monotonicReads(data, intent, dropped: dropped), convergence(data),
                cursorSafety(data), hintsAreReferences(data), hintsAccounted(data), openReachesHead(data),
                quiesceSettles(data)]
    }

    /// A database that could not be read fails every check that needs it, naming the file.
    static func unreadable(_ name: String, _ data: RunData) -> InvariantResult? {
        var violations: [Violation] = []
        if let error = data.serverReadError { violations.append(Violation(device: nil, account: nil, error)) }
        for device in data.devices {
            if let error = device.readError {
                violations.append(Violation(device: device.id, account: device.account, error))
            }
        }
        return violations.isEmpty ? nil : InvariantResult(name, violations, held: "")
    }

    // MARK: - no-lost-edit

    /// Every op a user saved is, at the end, applied on the server, or `needsAttention` for a reason the server gave
    /// (it refused the op, durably; or it answered "retry later" until the attempts ran out) — never for a key the
    /// server applied, never for an outcome that was only unknown.
    static func noLostEdit(_ data: RunData, _ intent: Intent) -> InvariantResult {
        let name = "no-lost-edit"
        if let unreadable = unreadable(name, data) { return unreadable }
        var violations: [Violation] = []
        let retried = Set(data.events.filter { $0.proc == "server" && $0.type == EventCatalogue.opRetryLater }
            .compactMap { $0.string("key") })
        var applied = 0, attention = 0
        for op in intent.ops {
            let account = op.account
            let where_ = "op \(op.key) (\(op.action) \(op.draft)) saved on \(op.device) at \(formatSim(op.savedSim))"
            let changes = intent.changesByKey[op.key] ?? []
            let row = intent.ledgerRow[op.key]
            if !changes.isEmpty {
                applied += 1
                if row == nil && !intent.reinstalled(op, data) {
                    violations.append(Violation(device: op.device, account: account,
                        "\(where_) was applied as seq \(changes[0].seq) but is gone from its ledger: "
                            + intent.whyMissing(op, data)))
                }
                if row?.status == .needsAttention {
                    violations.append(Violation(device: op.device, account: account,
                        "\(where_) needs attention (\"\(row?.lastError ?? "")\") although the server applied it as "
                            + "seq \(changes[0].seq): the user is told to act on an edit that is safe"))
                }
                continue
            }
            guard let row else {
                violations.append(Violation(device: op.device, account: account,
                                            "\(where_) is not in its ledger and the server never applied it: "
                                                + intent.whyMissing(op, data)))
                continue
            }
            switch row.status {
            case .needsAttention:
                attention += 1
                let reason = row.lastError ?? ""
                if reason.isEmpty {
                    violations.append(Violation(device: op.device, account: account,
                                                "\(where_) needs attention without a reason"))
                } else if data.server.keys[op.key]?.outcome == .rejected {
                    continue
                } else if reason.hasPrefix("gave up after"), retried.contains(op.key),
                          row.attempts >= (intent.settings[op.device]?.maxAttempts ?? 1) {
                    continue
                } else {
                    violations.append(Violation(device: op.device, account: account,
                        "\(where_) needs attention (\"\(reason)\") but the server never refused it: an op whose "
                            + "outcome is only unknown must be resent with its key, not given up"))
                }
            case .completed:
                violations.append(Violation(device: op.device, account: account,
                    "\(where_) is completed on the device but the server never applied it: its acknowledgement "
                        + "came before (or without) a commit"))
            case .savedOnDevice, .waitingToSend, .sending, .confirmationDelayed:
                violations.append(Violation(device: op.device, account: account,
                                            "\(where_) is still \(row.status.rawValue) after quiesce; the server never "
                                                + "applied it"))
            }
        }
        let total = intent.ops.count
        return InvariantResult(name, violations, held: attention == 0
            ? "all \(total) saved ops applied on the server"
            : "\(applied) of \(total) saved ops applied; \(attention) need attention, each refused by the server")
    }

    // MARK: - exactly-once

    /// Every server change belongs to an op its origin device saved, each op is applied at most once (whatever key it
    /// was sent under), each account's seqs run 1…head without a gap, and no account has more changes than its
    /// devices saved ops.
    static func exactlyOnce(_ data: RunData, _ intent: Intent) -> InvariantResult {
        let name = "exactly-once"
        if let error = data.serverReadError {
            return InvariantResult(name, [Violation(device: nil, account: nil, error)], held: "")
        }
        var violations: [Violation] = []
        var total = 0
        for account in data.server.changes.keys.sorted() {
            let changes = data.server.changes[account] ?? []
            total += changes.count
            for (index, change) in changes.enumerated() where change.seq != index + 1 {
                violations.append(Violation(device: nil, account: account,
                    "account \(account): change seq \(change.seq) follows seq "
                        + "\(index == 0 ? 0 : changes[index - 1].seq): "
                        + "seqs must run 1, 2, 3… without a gap"))
                break
            }
            if let head = data.server.heads[account], head != (changes.last?.seq ?? 0) {
                violations.append(Violation(device: nil, account: account,
                    "account \(account): its head says \(head) but its last change is seq \(changes.last?.seq ?? 0)"))
            }
            var firstSeq: [String: Int] = [:]
            for change in changes {
                let what = "change seq \(change.seq) of \(account) (\(change.action.rawValue) \(change.draft) from "
                    + "\(change.origin))"
                if let first = firstSeq[change.key] {
                    violations.append(Violation(device: change.origin, account: account,
                        "key \(change.key) applied twice: seq \(first) and seq \(change.seq)"))
                    continue
                }
                firstSeq[change.key] = change.seq
                guard let op = intent.opByKey[change.key] else {
                    violations.append(Violation(device: data.device(change.origin) == nil ? nil : change.origin,
                                                account: account,
                        "\(what) was applied under key \(change.key), which no op saved on \(change.origin) holds: "
                            + "the same intent sent again under a new key is applied twice"))
                    continue
                }
                if op.device != change.origin {
                    violations.append(Violation(device: change.origin, account: account,
                        "\(what) carries key \(change.key) of an op saved on \(op.device)"))
                }
            }
            let saved = intent.ops.filter { $0.account == account }.count
            if changes.count > saved {
                violations.append(Violation(device: nil, account: account,
                    "account \(account) has \(changes.count) changes but its devices saved only \(saved) ops"))
            }
        }
        // What the server reported applying must be what it durably holds.
        for event in data.events where event.proc == "server" && event.type == EventCatalogue.opApplied {
            guard let key = event.string("key"), let seq = event.int("seq"),
                  let account = event.string("account") else { continue }
            let durable = data.server.changes[account]?.first { $0.key == key }
            if durable?.seq != seq {
                violations.append(Violation(device: event.string("device"), account: account,
                    "the server reported key \(key) applied as seq \(seq) at \(formatSim(event.sim)) but its database "
                        + (durable.map { "holds it as seq \($0.seq)" } ?? "has no such change")))
            }
        }
        let replays = data.events.filter { $0.type == EventCatalogue.opDuplicate }.count
        return InvariantResult(name, violations,
                               held: "\(total) changes, each from one saved op, applied once; seqs gap-free; "
                                + "\(replays) replays answered as duplicates")
    }
}
