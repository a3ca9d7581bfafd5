import SyncDevice
import SyncProtocol
import SyncServer

/// One counter-example: what is wrong, about which device (or account), in a sentence a student can follow.
public struct Violation: Sendable, Equatable {
    /// The device the counter-example is about; nil when it is about an account or the server as a whole.
    public let device: String?
    /// The account it is about (the device's, when there is a device).
    public let account: String?
    public let text: String

    public init(device: String?, account: String?, _ text: String) {
        self.device = device
        self.account = account
        self.text = text
    }
}

/// The verdict on one invariant: held or not, a one-line detail, and every counter-example found.
public struct InvariantResult: Sendable, Equatable {
    public let name: String
    public let held: Bool
    public let detail: String
    /// What the counter-example is about (op keys, hint ids, devices, drafts), highlighted on the report's timeline;
    /// empty when the check names nothing more than its detail says.
    public var focus: [String] = []

    public var violations: [Violation] = []

    init(name: String, held: Bool, detail: String, violations: [Violation] = []) {
        self.name = name
        self.held = held
        self.detail = detail
        self.violations = violations
    }

    /// Held when there is no counter-example; the detail then says what was checked, else names the first one and
    /// how many there are.
    init(_ name: String, _ violations: [Violation], held detail: @autoclosure () -> String) {
        self.name = name
        self.violations = violations
        self.held = violations.isEmpty
        if let first = violations.first {
            self.detail = violations.count == 1 ? first.text : "\(first.text) (and \(violations.count - 1) more)"
        } else {
            self.detail = detail()
        }
    }
}

/// The sync invariants (docs/INVARIANTS.md gives each one's exact definition). The databases are the authority: what
/// the server and each device durably hold at the end is read through `ServerSnapshot` and `LedgerSnapshot`; the
/// events say what was intended (the launcher's record of each edit it asked for, the devices' `op.saved`) and explain
/// when and why.
enum InvariantChecks {
    static let names = ["no-lost-edit", "exactly-once", "monotonic-writes", "intent", "convergence", "cursor-safety",
                        "hints-are-references", "hints-accounted", "open-reaches-head", "quiesce-settles"]

    static func all(_ data: RunData) -> [InvariantResult] {
        let intent = Intent(data)
        let order = intent.saveOrder(data)
        return [noLostEdit(data, intent), exactlyOnce(data, intent), monotonicWrites(data, intent, order),
                self.intent(data, intent, order), convergence(data), cursorSafety(data),
                hintsAreReferences(data), hintsAccounted(data), openReachesHead(data), quiesceSettles(data)]
    }

    /// A database that could not be read fails every check that needs it, naming the file.
    static func unreadable(_ name: String, _ data: RunData) -> InvariantResult? {
        var violations: [Violation] = []
        if let error = data.serverReadError { violations.append(Violation(device: nil, account: nil, error)) }
        for device in data.devices {
            if let error = device.readError { violations.append(Violation(device: device.id, account: device.account, error)) }
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
        let retried = Set(data.events.filter { $0.proc == "server" && $0.type == "op.retryLater" }
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
                    "account \(account): change seq \(change.seq) follows seq \(index == 0 ? 0 : changes[index - 1].seq): "
                        + "seqs must run 1, 2, 3… without a gap"))
                break
            }
            if let head = data.server.heads[account], head != (changes.last?.seq ?? 0) {
                violations.append(Violation(device: nil, account: account,
                    "account \(account): its head says \(head) but its last change is seq \(changes.last?.seq ?? 0)"))
            }
            var firstSeq: [String: Int] = [:]
            for change in changes {
                let what = "change seq \(change.seq) of \(account) (\(change.action.rawValue) \(change.draft) from \(change.origin))"
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
        for event in data.events where event.proc == "server" && event.type == "op.applied" {
            guard let key = event.string("key"), let seq = event.int("seq"),
                  let account = event.string("account") else { continue }
            let durable = data.server.changes[account]?.first { $0.key == key }
            if durable?.seq != seq {
                violations.append(Violation(device: event.string("device"), account: account,
                    "the server reported key \(key) applied as seq \(seq) at \(formatSim(event.sim)) but its database "
                        + (durable.map { "holds it as seq \($0.seq)" } ?? "has no such change")))
            }
        }
        let replays = data.events.filter { $0.type == "op.duplicate" }.count
        return InvariantResult(name, violations,
                               held: "\(total) changes, each from one saved op, applied once; seqs gap-free; "
                                + "\(replays) replays answered as duplicates")
    }

    // MARK: - convergence

    /// After heal and quiesce every device's replica equals its account's drafts on the server, field by field.
    static func convergence(_ data: RunData) -> InvariantResult {
        let name = "convergence"
        if let unreadable = unreadable(name, data) { return unreadable }
        var violations: [Violation] = []
        for device in data.devices {
            let server = (data.server.drafts[device.account] ?? []).filter { !$0.deleted }
            let replica = device.state.replica.filter { !$0.deleted }
            let replicaByID = Dictionary(replica.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let serverIDs = Set(server.map(\.id))
            var differing: [String] = []
            for draft in server {
                guard let mine = replicaByID[draft.id] else {
                    differing.append("draft \(draft.id) is missing, server has v\(draft.version) \"\(draft.title)\"")
                    continue
                }
                if mine.version != draft.version || (mine.title ?? "") != draft.title || (mine.body ?? "") != draft.body {
                    var fields: [String] = []
                    if mine.version != draft.version { fields.append("version \(mine.version) vs \(draft.version)") }
                    if (mine.title ?? "") != draft.title { fields.append("title \"\(mine.title ?? "")\" vs \"\(draft.title)\"") }
                    if (mine.body ?? "") != draft.body { fields.append("body differs") }
                    differing.append("draft \(draft.id): " + fields.joined(separator: ", "))
                }
            }
            for draft in replica where !serverIDs.contains(draft.id) {
                differing.append("draft \(draft.id) exists on the device but not on the server")
            }
            if let first = differing.first {
                violations.append(Violation(device: device.id, account: device.account,
                    "\(device.id): \(differing.count) of \(max(server.count, replica.count)) drafts differ from the server; "
                        + "first: \(first)"))
            }
        }
        let drafts = data.server.drafts.values.reduce(0) { $0 + $1.filter { !$0.deleted }.count }
        var held = "\(data.devices.count) replicas equal the server, every field (\(drafts) drafts)"
        let behind = data.behindAtHeal()
        if !behind.isEmpty {
            held += "; \(behind.count) caught up only in heal: "
                + behind.prefix(3).map { "\($0.device) (cursor \($0.cursor) of \($0.head))" }.joined(separator: ", ")
        }
        return InvariantResult(name, violations, held: held)
    }

    // MARK: - cursor-safety

    /// Each device's stored cursor is at most its account's head, and its shadow (the server's state as the device
    /// holds it) equals the server's changes replayed up to that cursor — on the files at the end, and on the files
    /// the launcher read after each restart (`state.checked`). A cursor never moves backwards.
    static func cursorSafety(_ data: RunData) -> InvariantResult {
        let name = "cursor-safety"
        if let unreadable = unreadable(name, data) { return unreadable }
        var violations: [Violation] = []
        for device in data.devices {
            let changes = data.server.changes[device.account] ?? []
            if let problem = CursorCheck.problem(cursor: device.cursor, shadow: device.state.shadow, changes: changes) {
                violations.append(Violation(device: device.id, account: device.account,
                                            "\(device.id) at the end: \(problem)"))
            }
        }
        var checked = 0
        for event in data.events where event.proc == "launcher" && event.type == "state.checked" {
            checked += 1
            if event.fields["held"]?.boolValue == false, let target = event.string("target") {
                violations.append(Violation(device: target, account: data.device(target)?.account,
                    "\(target) after its restart at \(formatSim(event.sim)): \(event.string("detail") ?? "")"))
            }
        }
        var last: [String: Int] = [:]
        /// The cursor each device's events last reported: a move, or the cursor a restarted process found.
        var reported: [String: Int] = [:]
        var moves = 0
        for event in data.events
        where event.type == "cursor.moved" || event.type == "process.started" || event.type == "app.reinstalled" {
            guard let device = data.device(event.proc) else { continue }
            if event.type == "app.reinstalled" {
                // A new install starts from an empty file: its cursor history starts again at 0.
                last[event.proc] = 0
                reported[event.proc] = 0
                continue
            }
            if event.type == "process.started" {
                if let cursor = event.int("cursor") { reported[event.proc] = cursor }
                continue
            }
            guard let from = event.int("from"), let to = event.int("to") else { continue }
            moves += 1
            if to < from || from < (last[event.proc] ?? 0) {
                violations.append(Violation(device: device.id, account: device.account,
                    "\(device.id): cursor moved from \(from) to \(to) at \(formatSim(event.sim)) after reaching "
                        + "\(last[event.proc] ?? 0): it went backwards"))
            }
            last[event.proc] = max(last[event.proc] ?? 0, to)
            reported[event.proc] = to
        }
        // Every durable cursor move is an event: the stored cursor is the one the device last reported.
        for device in data.devices where device.readError == nil {
            guard let said = reported[device.id], said != device.cursor else { continue }
            violations.append(Violation(device: device.id, account: device.account,
                "\(device.id): its file holds cursor \(device.cursor) but its events last reported \(said): a cursor "
                    + "move that no event explains"))
        }
        return InvariantResult(name, violations,
                               held: "every shadow equals the server's changes up to its cursor (\(data.devices.count) "
                                + "devices at the end, \(checked) after restarts); \(moves) moves, none backwards")
    }

    // MARK: - hints-are-references

    /// No hint on the wire carries anything but the hint id, the account and the head: every frame the broker says
    /// it sent (`hint.delivered` with the keys of its body), and every frame a device received, decoded or refused.
    static func hintsAreReferences(_ data: RunData) -> InvariantResult {
        let name = "hints-are-references"
        let allowed = ["account", "head", "hint"]
        var violations: [Violation] = []
        var sent = 0, received = 0
        for event in data.events {
            let types = ["hint.delivered", "hint.received", "hint.malformed"]
            guard types.contains(event.type), let keysValue = event["keys"] else {
                if event.type == "hint.delivered" { sent += 1 }
                continue
            }
            if event.type == "hint.delivered" { sent += 1 } else { received += 1 }
            let keys = (keysValue.arrayValue ?? []).compactMap(\.stringValue).sorted()
            guard keys != allowed else { continue }
            let device = event.type == "hint.delivered" ? event.string("device") : event.proc
            let extra = keys.filter { !allowed.contains($0) }
            let what = event.type == "hint.delivered" ? "the broker sent" : (event.type == "hint.malformed"
                ? "\(event.proc) refused" : "\(event.proc) received")
            violations.append(Violation(device: device, account: device.flatMap { data.device($0)?.account },
                "\(what) hint \(event.string("hint") ?? "?") at \(formatSim(event.sim)) carrying "
                    + (extra.isEmpty ? "keys \(keys.joined(separator: ", "))" : "data: \(extra.joined(separator: ", "))")
                    + " — a hint is a reference (hint, account, head), never content"))
        }
        return InvariantResult(name, violations,
                               held: sent + received == 0 ? "no hint was sent"
                                : "\(sent) hints sent and \(received) received, each only {hint, account, head}")
    }

    // MARK: - hints-accounted

    /// Each accepted hint is delivered, dropped, coalesced, throttled, discarded, expired or still held (hints held
    /// by a broker that was killed are lost with it), and the broker's own counters agree with its events.
    static func hintsAccounted(_ data: RunData) -> InvariantResult {
        let name = "hints-accounted"
        let accounting = HintAccounting(data)
        let c = accounting.counts
        var violations = accounting.problems.map { Violation(device: nil, account: nil, $0) }
        let settled = c.delivered + c.dropped + c.coalesced + c.throttled + c.discarded + c.expired + c.held + c.lostInCrash
        if c.accepted != settled {
            violations.append(Violation(device: nil, account: nil,
                "accepted \(c.accepted) ≠ delivered \(c.delivered) + dropped \(c.dropped) + coalesced \(c.coalesced) + "
                    + "throttled \(c.throttled) + discarded \(c.discarded) + expired \(c.expired) + held \(c.held) + "
                    + "lost with a killed broker \(c.lostInCrash)"))
        }
        var detail = "\(c.accepted) accepted = \(c.delivered) delivered + \(c.dropped) dropped + \(c.coalesced) coalesced + "
            + "\(c.throttled) throttled + \(c.discarded) discarded + \(c.expired) expired + \(c.held) held"
        if c.lostInCrash > 0 { detail += " + \(c.lostInCrash) lost with a killed broker" }
        detail += " (\(c.duplicated) duplicates beside); the broker's counters agree"
        return InvariantResult(name, violations, held: detail)
    }

    // MARK: - open-reaches-head

    /// During the scenario, a pass that an app open started (`foreground`, `visibility`) reaches the head the server
    /// had when the pass started: what the user sees on opening is current. A pass that was offline, refused, cut
    /// off, killed or bounded by its page limit is excused and counted.
    static func openReachesHead(_ data: RunData) -> InvariantResult {
        let name = "open-reaches-head"
        var violations: [Violation] = []
        var appliedWalls: [String: [(wall: Int64, seq: Int)]] = [:]
        for event in data.events where event.proc == "server" && event.type == "op.applied" {
            if let account = event.string("account"), let seq = event.int("seq") {
                appliedWalls[account, default: []].append((event.wall, seq))
            }
        }
        let disturbances = Disturbances(data)
        var starts: [String: Event] = [:]
        var lastEnd: [String: Int64] = [:]
        var checked = 0
        var excused: [PassExcuse: Int] = [:]
        var unexplained: [String: (count: Int, opens: Int, first: String)] = [:]
        for event in data.events {
            guard let device = data.device(event.proc) else { continue }
            let key = "\(event.proc)/\(event.int("pass") ?? -1)"
            if event.type == "pass.start" {
                if ["foreground", "visibility"].contains(event.string("trigger") ?? ""), event.sim < data.scenarioEndSim {
                    starts[key] = event
                } else {
                    starts[key] = nil
                }
                continue
            }
            guard event.type == "pass.end" else { continue }
            let since = lastEnd[device.id] ?? 0
            lastEnd[device.id] = event.wall
            guard let start = starts.removeValue(forKey: key) else { continue }
            let head = appliedWalls[device.account]?.last(where: { $0.wall <= start.wall })?.seq ?? 0
            let cursor = event.int("cursor") ?? 0
            let outcome = event.string("outcome") ?? ""
            let bounded = (event.int("pulled") ?? 0) >= device.settings.maxPages * device.settings.pageLimit
            unexplained[device.id, default: (0, 0, "")].opens += 1
            if let excuse = disturbances.excuse(device: device.id, outcome: outcome,
                                                cutOff: event.fields["cutOff"]?.boolValue == true, bounded: bounded,
                                                start: start.wall, since: since, end: event.wall) {
                excused[excuse, default: 0] += 1
                continue
            }
            checked += 1
            var why = ""
            if outcome != "completed" {
                let opened = "\(formatSim(start.sim)) (\(outcome))"
                unexplained[device.id]!.count += 1
                if unexplained[device.id]!.first.isEmpty { unexplained[device.id]!.first = opened }
                why = "; it ended \(outcome) with no cause in the scenario (no offline, kill, pause, server fault or "
                    + "partition)"
            }
            if cursor < head {
                violations.append(Violation(device: device.id, account: device.account,
                    "\(device.id) opened at \(formatSim(start.sim)) (\(start.string("trigger") ?? "")): the server's head "
                        + "was \(head), the pass the open started ended at cursor \(cursor): the user saw data "
                        + "\(head - cursor) change\(head - cursor == 1 ? "" : "s") old" + why))
            }
        }
        // Errors that reached the head anyway still count: a device whose opens keep failing does not recover.
        for (id, tally) in unexplained.sorted(by: { $0.key < $1.key }) where tally.count > errorBound(tally.opens) {
            violations.append(Violation(device: id, account: data.device(id)?.account,
                "\(id): \(tally.count) of its \(tally.opens) passes started by an app open ended in an error with no "
                    + "cause in the scenario (first at \(tally.first)), more than the bound of "
                    + "\(errorBound(tally.opens)): the device does not recover by itself"))
        }
        let errors = unexplained.values.reduce(0) { $0 + $1.count }
        let reasons = PassExcuse.allCases.compactMap { excuse in excused[excuse].map { "\($0) \(excuse.rawValue)" } }
        let total = excused.values.reduce(0, +)
        return InvariantResult(name, violations,
                               held: "\(checked) passes started by an app open during the scenario reached the head "
                                + "(\(total) excused\(reasons.isEmpty ? "" : ": " + reasons.joined(separator: ", "))"
                                + "; \(errors) ended in an error with no cause in the scenario)")
    }

    /// How many of a device's open-started passes may end in an error the scenario did not cause (a reply lost to
    /// the machine's own load, say) before open-reaches-head calls the device one that does not recover.
    static func errorBound(_ opens: Int) -> Int { max(2, opens / 10) }

    // MARK: - quiesce-settles

    /// After heal, quiesce ends with every op settled and every cursor at its account's head; stuck sync is a bug.
    static func quiesceSettles(_ data: RunData) -> InvariantResult {
        let name = "quiesce-settles"
        let launcher = data.events.filter { $0.proc == "launcher" }
        if let timeout = launcher.last(where: { $0.type == "quiesce.timeout" }) {
            let stuck = (timeout["stuck"]?.arrayValue ?? []).compactMap(\.stringValue)
            let devices = (timeout["stuckDevices"]?.arrayValue ?? []).compactMap(\.stringValue)
            let intro = "quiesce did not settle after \(timeout.int("rounds") ?? 0) rounds"
            // One counter-example per stuck device, so an expectation can name the device or its account.
            guard devices.count == stuck.count, !devices.isEmpty else {
                let text = intro + (stuck.isEmpty ? "" : ": " + stuck.prefix(5).joined(separator: "; "))
                return InvariantResult(name, [Violation(device: nil, account: nil, text)], held: "")
            }
            let violations = zip(devices, stuck).map { device, text in
                Violation(device: device, account: data.device(device)?.account, "\(intro): \(text)")
            }
            return InvariantResult(name, violations, held: "")
        }
        guard let done = launcher.last(where: { $0.type == "quiesce.done" }) else {
            let ran = launcher.contains { $0.type == "process.started" }
            return InvariantResult(name, ran ? [Violation(device: nil, account: nil, "the run never quiesced")] : [],
                                   held: "no launcher record (a hand-made run folder)")
        }
        return InvariantResult(name, [], held: "every op settled and every cursor at its head after "
            + "\(done.int("rounds") ?? 0) rounds")
    }
}

/// What the users intended: every op saved, from the launcher's record of each edit it asked for (the key the
/// device acknowledged), the devices' `op.saved` events and their ledgers, with what the server did of each.
struct Intent {
    struct SavedOp {
        let key: String
        let device: String
        let account: String?
        let draft: String
        let action: String
        let savedSim: Double
    }

    private(set) var ops: [SavedOp] = []
    private(set) var opByKey: [String: SavedOp] = [:]
    private(set) var ledgerRow: [String: LedgerSnapshot.OpRow] = [:]
    private(set) var changesByKey: [String: [ServerSnapshot.ChangeRow]] = [:]
    let settings: [String: DeviceSettings]

    init(_ data: RunData) {
        settings = Dictionary(data.devices.map { ($0.id, $0.settings) }, uniquingKeysWith: { a, _ in a })
        for change in data.changes { changesByKey[change.key, default: []].append(change) }
        func add(_ op: SavedOp) {
            guard opByKey[op.key] == nil else { return }
            opByKey[op.key] = op
            ops.append(op)
        }
        for event in data.events {
            switch (event.proc, event.type) {
            case ("launcher", "scenario.action") where event.string("action") == "edit":
                guard let key = event.string("key"), let device = event.string("target") else { continue }
                add(SavedOp(key: key, device: device, account: data.device(device)?.account,
                            draft: event.string("draft") ?? "?", action: event.string("op") ?? "?", savedSim: event.sim))
            case (_, "op.saved"):
                guard let key = event.string("key"), let device = data.device(event.proc) else { continue }
                add(SavedOp(key: key, device: device.id, account: device.account, draft: event.string("draft") ?? "?",
                            action: event.string("action") ?? "?", savedSim: event.sim))
            default:
                continue
            }
        }
        for device in data.devices {
            for row in device.ops {
                ledgerRow[row.key] = row
                add(SavedOp(key: row.key, device: device.id, account: device.account, draft: row.draft,
                            action: row.action.rawValue,
                            savedSim: data.simTime(wall: row.savedWall)))
            }
        }
    }

    /// Whether the op's app was reinstalled after it was saved (a new install starts with an empty ledger).
    func reinstalled(_ op: SavedOp, _ data: RunData) -> Bool {
        data.events.contains { $0.type == "app.reinstalled" && $0.proc == op.device && $0.sim >= op.savedSim }
    }

    /// Why an op the user saved is not in its device's ledger: what happened to the device after the save.
    func whyMissing(_ op: SavedOp, _ data: RunData) -> String {
        for event in data.events where event.sim >= op.savedSim {
            let about = event.proc == op.device || event.string("target") == op.device
                || event.string("device") == op.device
            guard about else { continue }
            switch event.type {
            case "app.reinstalled":
                return "the app was reinstalled at \(formatSim(event.sim)) before any pass sent it"
            case "process.killed":
                return "\(op.device) was killed at \(formatSim(event.sim)) and the op did not survive it (was it ever "
                    + "committed to the ledger?)"
            case "app.forceQuit":
                return "the app was force-quit at \(formatSim(event.sim)) and the op did not survive it (was it ever "
                    + "committed to the ledger?)"
            default:
                continue
            }
        }
        return "the ledger lost it"
    }
}

/// Cursor safety on one device's files: the shadow must be the server's changes replayed up to the cursor.
enum CursorCheck {
    /// The replay of `changes` with seq ≤ `cursor`, by the rules `Ledger.apply` uses.
    static func replay(_ changes: [ServerSnapshot.ChangeRow], upTo cursor: Int) -> [String: DraftRow] {
        var rows: [String: DraftRow] = [:]
        for change in changes where change.seq <= cursor {
            let old = rows[change.draft]
            switch change.action {
            case .create:
                rows[change.draft] = DraftRow(id: change.draft, title: change.title, body: change.body,
                                              version: change.version, deleted: false)
            case .update:
                rows[change.draft] = DraftRow(id: change.draft, title: change.title ?? old?.title,
                                              body: change.body ?? old?.body, version: change.version, deleted: false)
            case .delete:
                rows[change.draft] = DraftRow(id: change.draft, title: old?.title, body: old?.body,
                                              version: change.version, deleted: true)
            }
        }
        return rows
    }

    /// nil when the cursor and shadow are consistent with the server's changes; else what is wrong, naming the first
    /// change the cursor passed without the shadow holding it.
    static func problem(cursor: Int, shadow: [DraftRow], changes: [ServerSnapshot.ChangeRow]) -> String? {
        let head = changes.last?.seq ?? 0
        if cursor > head { return "cursor \(cursor) is beyond the server's head \(head)" }
        let expected = replay(changes, upTo: cursor)
        let held = Dictionary(shadow.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var wrong: [String] = []
        for id in Set(expected.keys).union(held.keys).sorted() where expected[id] != held[id] {
            wrong.append(id)
        }
        guard let first = wrong.first else { return nil }
        let last = changes.last { $0.seq <= cursor && $0.draft == first }
        let mine = held[first].map { "v\($0.version)\($0.deleted ? " deleted" : "")" } ?? "nothing"
        let should = expected[first].map { "v\($0.version)\($0.deleted ? " deleted" : "")" } ?? "nothing"
        var text = "cursor \(cursor), but its shadow holds \(mine) of draft \(first) where the server's changes up to "
            + "\(cursor) give \(should)"
        if let last { text += " (change seq \(last.seq), key \(last.key))" }
        text += ": the cursor passed a change that was not durably applied"
        if wrong.count > 1 { text += "; \(wrong.count) drafts differ" }
        return text
    }
}

/// The fate of every hint, from the broker's decision events, per broker incarnation (a restarted broker numbers its
/// hints again), checked against the broker's own counters for its last incarnation.
struct HintAccounting {
    struct Counts {
        var accepted = 0, delivered = 0, dropped = 0, duplicated = 0, coalesced = 0, throttled = 0, discarded = 0
        var expired = 0, held = 0, lostInCrash = 0
    }

    static let fates = ["hint.delivered", "hint.dropped", "hint.coalesced", "hint.throttled", "hint.discarded", "hint.expired"]

    var counts = Counts()
    var problems: [String] = []
    /// Fate of each hint by "incarnation/hint id".
    var fate: [String: String] = [:]
    /// Hints accepted per change seq and account, for the lineage.
    var hintsBySeq: [String: [String]] = [:]

    init(_ data: RunData) {
        var incarnation = 0
        var open: Set<String> = []   // accepted, no fate yet, current incarnation
        var last = Counts()          // the current incarnation's counts, to compare with the broker's counters
        for event in data.events where event.proc == "broker" {
            if event.type == "process.started" {
                if incarnation > 0 {
                    counts.lostInCrash += open.count
                    for id in open { fate[id] = "lost with the broker" }
                }
                open = []
                last = Counts()
                incarnation += 1
                continue
            }
            guard event.type.hasPrefix("hint."), let hint = event.string("hint") else { continue }
            let id = "\(incarnation)/\(hint)"
            switch event.type {
            case "hint.accepted":
                counts.accepted += 1
                last.accepted += 1
                if fate[id] != nil || open.contains(id) {
                    problems.append("hint \(hint) was accepted twice by one broker at \(formatSim(event.sim))")
                }
                open.insert(id)
                let account = event.string("account") ?? ""
                for seq in event["seqs"]?.arrayValue ?? [] {
                    if let s = seq.intValue { hintsBySeq["\(account)/\(s)", default: []].append(id) }
                }
            case "hint.duplicated":
                counts.duplicated += 1
                last.duplicated += 1
            case let type where HintAccounting.fates.contains(type):
                guard open.remove(id) != nil else {
                    problems.append("hint \(hint) has a second fate (\(type)) at \(formatSim(event.sim)), or was never "
                        + "accepted")
                    continue
                }
                fate[id] = String(type.dropFirst(5))
                switch type {
                case "hint.delivered": counts.delivered += 1; last.delivered += 1
                case "hint.dropped": counts.dropped += 1; last.dropped += 1
                case "hint.coalesced": counts.coalesced += 1; last.coalesced += 1
                case "hint.throttled": counts.throttled += 1; last.throttled += 1
                case "hint.discarded": counts.discarded += 1; last.discarded += 1
                default: counts.expired += 1; last.expired += 1
                }
            default:
                break
            }
        }
        counts.held = open.count
        last.held = open.count
        for id in open { fate[id] = "held" }
        // The broker's own counters (asked at the end of the run, so of its last incarnation) must agree with its
        // events: a hint the broker dropped without saying so shows here.
        guard let counters = data.stats["broker"]?["hints"] else { return }
        let pairs: [(String, Int)] = [
            ("accepted", last.accepted), ("delivered", last.delivered), ("dropped", last.dropped),
            ("duplicated", last.duplicated), ("coalesced", last.coalesced), ("throttled", last.throttled),
            ("discarded", last.discarded), ("expired", last.expired), ("held", last.held),
        ]
        for (field, fromEvents) in pairs {
            guard let counted = counters[field]?.intValue else { continue }
            if counted != fromEvents {
                problems.append("the broker counts \(counted) hints \(field) but its events show \(fromEvents): "
                    + (counted > fromEvents ? "\(counted - fromEvents) \(field) without an event"
                        : "\(fromEvents - counted) events it does not count"))
            }
        }
    }
}
