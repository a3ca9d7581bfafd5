import SyncProtocol

/// The verdict on one invariant: held or not, and a one-line detail naming the first counter-example.
public struct InvariantResult: Sendable, Equatable {
    public let name: String
    public let held: Bool
    public let detail: String
    /// What the counter-example is about (op keys, hint ids, devices, drafts), highlighted on the report's timeline;
    /// empty when the check names nothing more than its detail says.
    public var focus: [String] = []
}

/// The six invariants of DESIGN.md, each computed from the run's databases and events.
enum InvariantChecks {
    static func all(_ data: RunData) -> [InvariantResult] {
        [noLostEdit(data), exactlyOnce(data), convergence(data), cursorSafety(data), hintsAreReferences(data),
         hintsAccounted(data)]
    }

    /// Every op a device saved is applied on the server exactly once, or is needsAttention with a stated reason.
    static func noLostEdit(_ data: RunData) -> InvariantResult {
        let name = "no-lost-edit"
        if let error = data.serverReadError { return InvariantResult(name: name, held: false, detail: error) }
        var appliedCount: [String: Int] = [:]
        for change in data.changes { appliedCount[change.key, default: 0] += 1 }
        var ledgerKeys: [String: Set<String>] = [:]
        var total = 0, attention = 0
        for device in data.devices {
            if let error = device.readError { return InvariantResult(name: name, held: false, detail: error) }
            ledgerKeys[device.id] = Set(device.ops.map(\.key))
            for op in device.ops {
                total += 1
                switch op.status {
                case "needsAttention":
                    attention += 1
                    if op.lastError.isEmpty {
                        return InvariantResult(name: name, held: false,
                                               detail: "op \(op.key) on \(device.id) needs attention without a reason")
                    }
                case "completed":
                    if appliedCount[op.key, default: 0] == 0 {
                        return InvariantResult(name: name, held: false,
                                               detail: "op \(op.key) on \(device.id) is completed but the server never applied it")
                    }
                default:
                    return InvariantResult(name: name, held: false,
                                           detail: "op \(op.key) on \(device.id) is still \(op.status) after quiesce")
                }
            }
        }
        // An op the device announced as saved must still be in its ledger: its disappearance would be a lost edit.
        for event in data.events where event.type == "op.saved" {
            guard let key = event.string("key") else { continue }
            if ledgerKeys[event.proc]?.contains(key) != true {
                return InvariantResult(name: name, held: false,
                                       detail: "op \(key) was saved on \(event.proc) at sim \(Int(event.sim))s but is not in its ledger")
            }
        }
        let detail = attention == 0
            ? "all \(total) saved ops applied on the server"
            : "\(total - attention) of \(total) saved ops applied; \(attention) need attention, each with a reason"
        return InvariantResult(name: name, held: true, detail: detail)
    }

    /// No idempotency key is applied twice: not in the server's changes, not in its op.applied events.
    static func exactlyOnce(_ data: RunData) -> InvariantResult {
        let name = "exactly-once"
        if let error = data.serverReadError { return InvariantResult(name: name, held: false, detail: error) }
        var seen: [String: Int] = [:]
        for change in data.changes {
            if let first = seen[change.key] {
                return InvariantResult(name: name, held: false,
                                       detail: "key \(change.key) applied twice: seq \(first) and \(change.seq) (\(change.account))")
            }
            seen[change.key] = change.seq
        }
        var applied: [String: Int] = [:]
        for event in data.events where event.type == "op.applied" {
            guard let key = event.string("key") else { continue }
            let seq = event.int("seq") ?? -1
            if let first = applied[key], first != seq {
                return InvariantResult(name: name, held: false,
                                       detail: "key \(key) reported applied twice: seq \(first) and \(seq)")
            }
            applied[key] = seq
        }
        let duplicates = data.events.filter { $0.type == "op.duplicate" }.count
        return InvariantResult(name: name, held: true,
                               detail: "\(seen.count) keys applied once each; \(duplicates) replays answered as duplicates")
    }

    /// After heal and quiesce every replica equals the server's drafts for its account.
    static func convergence(_ data: RunData) -> InvariantResult {
        let name = "convergence"
        if let error = data.serverReadError { return InvariantResult(name: name, held: false, detail: error) }
        for device in data.devices {
            if let error = device.readError { return InvariantResult(name: name, held: false, detail: error) }
            let server = data.serverDrafts[device.account] ?? []
            if device.drafts == server { continue }
            let serverByID = Dictionary(server.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let replicaByID = Dictionary(device.drafts.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for draft in server where replicaByID[draft.id] != draft {
                let mine = replicaByID[draft.id].map { "v\($0.version) \"\($0.title)\"" } ?? "missing"
                return InvariantResult(name: name, held: false,
                                       detail: "\(device.id): draft \(draft.id) is \(mine), server has v\(draft.version) \"\(draft.title)\"")
            }
            for draft in device.drafts where serverByID[draft.id] == nil {
                return InvariantResult(name: name, held: false,
                                       detail: "\(device.id): draft \(draft.id) exists on the device but not on the server")
            }
        }
        let drafts = data.serverDrafts.values.reduce(0) { $0 + $1.count }
        return InvariantResult(name: name, held: true,
                               detail: "\(data.devices.count) replicas equal the server (\(drafts) drafts)")
    }

    /// A cursor never decreases and never passes a change the device did not durably apply.
    static func cursorSafety(_ data: RunData) -> InvariantResult {
        let name = "cursor-safety"
        var accountOf: [String: String] = [:]
        for device in data.devices { accountOf[device.id] = device.account }
        var seqsByAccount: [String: [Int]] = [:]
        for change in data.changes { seqsByAccount[change.account, default: []].append(change.seq) }
        var applied: [String: Set<Int>] = [:]
        var lastTo: [String: Int] = [:]
        var moves = 0
        for event in data.events {
            guard let account = accountOf[event.proc] else { continue }
            if event.type == "change.applied", let seq = event.int("seq") {
                applied[event.proc, default: []].insert(seq)
            } else if event.type == "cursor.moved", let from = event.int("from"), let to = event.int("to") {
                moves += 1
                if to < from {
                    return InvariantResult(name: name, held: false,
                                           detail: "\(event.proc): cursor moved back from \(from) to \(to) at sim \(Int(event.sim))s")
                }
                if let previous = lastTo[event.proc], from < previous {
                    return InvariantResult(name: name, held: false,
                                           detail: "\(event.proc): cursor was \(previous), later moved from \(from): it decreased")
                }
                lastTo[event.proc] = to
                let mine = applied[event.proc] ?? []
                for seq in seqsByAccount[account] ?? [] where seq > from && seq <= to && !mine.contains(seq) {
                    return InvariantResult(name: name, held: false,
                                           detail: "\(event.proc): cursor moved to \(to) past change \(seq), which it never applied")
                }
            }
        }
        for device in data.devices where device.readError == nil {
            let head = data.heads[device.account] ?? 0
            if device.cursor > head {
                return InvariantResult(name: name, held: false,
                                       detail: "\(device.id): cursor \(device.cursor) is beyond the server's head \(head)")
            }
            if let last = lastTo[device.id], device.cursor < last {
                return InvariantResult(name: name, held: false,
                                       detail: "\(device.id): stored cursor \(device.cursor) is behind its last move to \(last)")
            }
        }
        return InvariantResult(name: name, held: true,
                               detail: "\(moves) cursor moves, none backwards, none past an unapplied change")
    }

    /// No hint on the wire carries anything but the hint id, the account and the head.
    static func hintsAreReferences(_ data: RunData) -> InvariantResult {
        let name = "hints-are-references"
        let allowed = ["account", "head", "hint"]
        var count = 0
        for event in data.events where event.type == "hint.received" {
            count += 1
            let keys = (event["keys"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
            if keys != allowed {
                return InvariantResult(name: name, held: false,
                                       detail: "\(event.proc) received hint \(event.string("hint") ?? "?") carrying keys \(keys.joined(separator: ", "))")
            }
        }
        return InvariantResult(name: name, held: true,
                               detail: count == 0 ? "no hint reached a device" : "\(count) hints received, each only {hint, account, head}")
    }

    /// Each accepted hint is delivered, dropped, coalesced, throttled, discarded, expired or still held; hints held by
    /// a broker that was killed are counted as lost with it.
    static func hintsAccounted(_ data: RunData) -> InvariantResult {
        let name = "hints-accounted"
        let accounting = HintAccounting(data)
        if let problem = accounting.problem { return InvariantResult(name: name, held: false, detail: problem) }
        let c = accounting.counts
        let settled = c.delivered + c.dropped + c.coalesced + c.throttled + c.discarded + c.expired + c.held + c.lostInCrash
        guard c.accepted == settled else {
            return InvariantResult(name: name, held: false,
                                   detail: "accepted \(c.accepted) ≠ delivered \(c.delivered) + dropped \(c.dropped) + coalesced \(c.coalesced) + throttled \(c.throttled) + discarded \(c.discarded) + expired \(c.expired) + held \(c.held) + lost with a killed broker \(c.lostInCrash)")
        }
        var detail = "\(c.accepted) accepted = \(c.delivered) delivered + \(c.dropped) dropped + \(c.coalesced) coalesced + \(c.throttled) throttled + \(c.discarded) discarded + \(c.expired) expired + \(c.held) held"
        if c.lostInCrash > 0 { detail += " + \(c.lostInCrash) lost with a killed broker" }
        detail += " (\(c.duplicated) duplicates beside)"
        return InvariantResult(name: name, held: true, detail: detail)
    }
}

/// The fate of every hint, from the broker's decision events, per broker incarnation (a restarted broker numbers its
/// hints again), checked against the broker's own counters.
struct HintAccounting {
    struct Counts {
        var accepted = 0, delivered = 0, dropped = 0, duplicated = 0, coalesced = 0, throttled = 0, discarded = 0
        var expired = 0, held = 0, lostInCrash = 0
    }

    static let fates = ["hint.delivered", "hint.dropped", "hint.coalesced", "hint.throttled", "hint.discarded", "hint.expired"]

    var counts = Counts()
    var problem: String?
    /// Fate of each hint by "incarnation/hint id".
    var fate: [String: String] = [:]
    /// Hints accepted per change seq and account, for the lineage.
    var hintsBySeq: [String: [String]] = [:]

    init(_ data: RunData) {
        var incarnation = 0
        var open: Set<String> = []   // accepted, no fate yet, current incarnation
        var order: [String] = []
        for event in data.events where event.proc == "broker" {
            if event.type == "process.started" {
                if incarnation > 0 {
                    counts.lostInCrash += open.count
                    for id in open { fate[id] = "lost with the broker" }
                }
                open = []
                incarnation += 1
                continue
            }
            guard event.type.hasPrefix("hint."), let hint = event.string("hint") else { continue }
            let id = "\(incarnation)/\(hint)"
            switch event.type {
            case "hint.accepted":
                counts.accepted += 1
                if fate[id] != nil || open.contains(id) {
                    problem = problem ?? "hint \(hint) accepted twice by one broker"
                }
                open.insert(id)
                order.append(id)
                let account = event.string("account") ?? ""
                for seq in event["seqs"]?.arrayValue ?? [] {
                    if let s = seq.intValue { hintsBySeq["\(account)/\(s)", default: []].append(id) }
                }
            case "hint.duplicated":
                counts.duplicated += 1
            case let type where HintAccounting.fates.contains(type):
                guard open.remove(id) != nil else {
                    problem = problem ?? "hint \(hint) has a second fate (\(type)) or was never accepted"
                    continue
                }
                fate[id] = String(type.dropFirst(5))
                switch type {
                case "hint.delivered": counts.delivered += 1
                case "hint.dropped": counts.dropped += 1
                case "hint.coalesced": counts.coalesced += 1
                case "hint.throttled": counts.throttled += 1
                case "hint.discarded": counts.discarded += 1
                default: counts.expired += 1
                }
            default:
                break
            }
        }
        counts.held = open.count
        for id in open { fate[id] = "held" }
        // The broker's own counters (asked at the end of the run) must agree with its events.
        if let held = data.stats["broker"]?["held"]?.intValue, held != open.count {
            problem = problem ?? "the broker says it holds \(held) hints but its events leave \(open.count) without a fate"
        }
    }
}
