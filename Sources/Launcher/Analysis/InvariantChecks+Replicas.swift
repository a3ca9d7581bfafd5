import LabKit
import SyncDevice
import SyncProtocol
import SyncServer

extension InvariantChecks {
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
                if mine.version != draft.version || (mine.title ?? "") != draft.title
                    || (mine.body ?? "") != draft.body {
                    var fields: [String] = []
                    if mine.version != draft.version { fields.append("version \(mine.version) vs \(draft.version)") }
                    if (mine.title ?? "") != draft.title {
                        fields.append("title \"\(mine.title ?? "")\" vs \"\(draft.title)\"")
                    }
                    if (mine.body ?? "") != draft.body { fields.append("body differs") }
                    differing.append("draft \(draft.id): " + fields.joined(separator: ", "))
                }
            }
            for draft in replica where !serverIDs.contains(draft.id) {
                differing.append("draft \(draft.id) exists on the device but not on the server")
            }
            if let first = differing.first {
                violations.append(Violation(device: device.id, account: device.account,
                    "\(device.id): \(differing.count) of \(max(server.count, replica.count)) drafts differ from the "
                        + "server; "
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
        for event in data.events where event.proc == "launcher" && event.type == EventCatalogue.stateChecked {
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
        where event.type == EventCatalogue.cursorMoved || event.type == EventCatalogue.processStarted
            || event.type == EventCatalogue.appReinstalled {
            guard let device = data.device(event.proc) else { continue }
            if event.type == EventCatalogue.appReinstalled {
                // A new install starts from an empty file: its cursor history starts again at 0.
                last[event.proc] = 0
                reported[event.proc] = 0
                continue
            }
            if event.type == EventCatalogue.processStarted {
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
}
