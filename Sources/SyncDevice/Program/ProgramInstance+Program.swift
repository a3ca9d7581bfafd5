import LabKit
import SyncProtocol

extension ProgramInstance {
    /// Event types the lab writes for an outside device itself: a program may not write them (it would forge the
    /// platform's or the user's record).
    static let labOwnedEvents: Set<String> = [
        EventCatalogue.passStart.name, EventCatalogue.passEnd.name, EventCatalogue.trigger.name,
        EventCatalogue.triggerRefused.name, EventCatalogue.hintReceived.name, EventCatalogue.hintIgnored.name,
        EventCatalogue.hintMalformed.name, EventCatalogue.appForeground.name, EventCatalogue.appBackground.name,
        EventCatalogue.appClosed.name, EventCatalogue.appForceQuit.name, EventCatalogue.appReinstalled.name,
        EventCatalogue.netOffline.name, EventCatalogue.netOnline.name, EventCatalogue.brokerRegistered.name,
        EventCatalogue.brokerError.name, EventCatalogue.controlReceived.name, EventCatalogue.programExpire.name,
        EventCatalogue.programKilled.name,
    ]

    /// One line the program wrote on its standard output, already parsed (`line` counts them from 1).
    public mutating func onProgramLine(_ value: JSONValue, line: Int, now: Double) -> [ProgramDirective] {
        self.now = max(self.now, now)
        guard !failed else { return [] }
        switch value["type"]?.stringValue {
        case "event":
            return event(value, line: line)
        case "reply":
            guard let req = value["req"]?.intValue, let entry = waiting.removeValue(forKey: req) else {
                return fail("line \(line): a reply to request \(value["req"].map { "\($0)" } ?? "(no req)"), "
                    + "which the lab is not waiting for")
            }
            return finishing(reply(value, to: entry.what, line: line))
        case "ready":
            return fail("line \(line): a second \"ready\"")
        default:
            return fail("line \(line): \"type\" must be event or reply, got \(value["type"].map { "\($0)" } ?? "none")")
        }
    }

    /// An event the program writes through the lab: a device event of the catalogue with its required fields of
    /// the right kinds, and none it does not declare (docs/DEVICE-CONTRACT.md, "Events").
    mutating func event(_ value: JSONValue, line: Int) -> [ProgramDirective] {
        guard let name = value["event"]?.stringValue, let type = EventType.named(name), type.roles.contains(.device)
        else {
            return fail("line \(line): \(value["event"].map { "\($0)" } ?? "no \"event\"") is not a device event "
                + "of the catalogue (docs/ARCHITECTURE.md, events)")
        }
        guard !Self.labOwnedEvents.contains(name) else {
            return fail("line \(line): \(name) is written by the lab for an outside device, not by the program")
        }
        guard case .object(let pairs) = value["fields"] ?? .object([]) else {
            return fail("line \(line): \(name): \"fields\" must be an object")
        }
        let given = Dictionary(pairs, uniquingKeysWith: { a, _ in a })
        for field in type.fields {
            guard let v = given[field.name], v != .null else {
                if field.optional { continue }
                return fail("line \(line): \(name) lacks its field \"\(field.name)\"")
            }
            guard field.kind.matches(v) else {
                return fail("line \(line): \(name).\(field.name) must be \(field.kind.rawValue), got \(v)")
            }
        }
        if !type.open, let extra = pairs.first(where: { pair in !type.fields.contains { $0.name == pair.0 } }) {
            return fail("line \(line): \(name) has a field \"\(extra.0)\" the catalogue does not declare")
        }
        if name == EventCatalogue.cursorMoved.name, let to = given["to"]?.intValue { cursor = max(cursor, to) }
        return [.log(EventLine(name, pairs))]
    }

    mutating func reply(_ value: JSONValue, to what: Waiting, line: Int) -> [ProgramDirective] {
        let ok = value["ok"]?.boolValue ?? false
        let detail = value["error"]?.stringValue ?? ""
        switch what {
        case .edit(let pending):
            guard ok else { return answer(pending, .refused(detail.isEmpty ? "the program refused the edit" : detail)) }
            guard let key = value["key"]?.stringValue, !key.isEmpty else {
                return fail("line \(line): the reply to an edit has no \"key\"")
            }
            // `saw` (optional): the draft as the replica showed it when the edit began, for read-your-writes and
            // monotonic-reads; without it those checks have nothing of this device's to judge.
            var data: [(String, JSONValue)] = [("key", .string(key))]
            if let saw = value["saw"] { data.append(("saw", saw)) }
            var out = answer(pending, .ack("saved on this device", .object(data)))
            if environment.isForeground { out += trigger(.localEdit, now: now) }
            return out
        case .status(let pending):
            if let failure = readState(value, line: line) { return failure }
            return answer(pending, .ack("status", statusData()))
        case .network:
            return ok ? [] : fail("line \(line): the program refused a network change: \(detail)")
        case .pass(let id):
            guard let current = pass, current.id == id else {
                return fail("line \(line): a reply to pass \(id), which is not running")
            }
            if let failure = readState(value, line: line) { return failure }
            return endPass(current, value)
        }
    }

    /// `cursor`, `head`, `pending` of a reply: integers ≥ 0, the cursor never back.
    mutating func readState(_ value: JSONValue, line: Int) -> [ProgramDirective]? {
        for name in ["cursor", "head", "pending"] {
            guard let n = value[name]?.intValue, n >= 0 else {
                return fail("line \(line): the reply needs \"\(name)\", an integer ≥ 0")
            }
        }
        cursor = value["cursor"]!.intValue!
        head = max(head, value["head"]!.intValue!, cursor)
        pending = value["pending"]!.intValue!
        return nil
    }

    /// `pass.end` of `current`, now.
    func passEndLine(_ current: Pass, sent: Int, pulled: Int, cutOff: Bool, outcome: String,
                     success: Bool) -> ProgramDirective {
        .log(EventLine(.passEnd, [
            ("pass", .int(current.id)), ("trigger", .string(current.trigger.rawValue)), ("sent", .int(sent)),
            ("pulled", .int(pulled)), ("cursor", .int(cursor)), ("cutOff", .bool(cutOff)),
            ("outcome", .string(outcome)), ("head", .int(head)), ("success", .bool(success)),
            ("durationSec", .double(now - current.started)),
        ]))
    }

    /// Tells the platform's scheduler that `current` ended now, with its execution time.
    mutating func schedulerPassEnded(_ current: Pass, cutOff: Bool) -> SchedulerOutput {
        scheduler.passEnded(trigger: current.trigger, started: current.started, ended: now,
                            execution: (now - current.started) / max(settings.executionScale, 1e-9),
                            cutOff: cutOff, rng: &rng)
    }

    mutating func endPass(_ current: Pass, _ value: JSONValue) -> [ProgramDirective] {
        pass = nil
        // Told to expire, the program ended its pass within the grace: cut off, whatever it says it got done.
        let cutOff = current.killAt != nil
        let outcome = cutOff ? "cutOff" : value["outcome"]?.stringValue ?? "completed"
        let sent = value["sent"]?.intValue ?? 0
        let pulled = value["pulled"]?.intValue ?? 0
        let success = outcome == "completed" && cursor >= head
        if success { lastSuccess = now }
        var out = [passEndLine(current, sent: sent, pulled: pulled, cutOff: cutOff, outcome: outcome,
                               success: success)]
        let output = schedulerPassEnded(current, cutOff: cutOff)
        for sync in current.syncs { out += answer(sync, .ack("pass \(current.id) ended \(outcome)", statusData())) }
        if let next = followUp {
            followUp = nil
            out += startPass(next.trigger, syncs: next.syncs, force: next.force)
        } else if !cutOff, value["more"]?.boolValue == true, scheduler.allowsContinuation(of: current.trigger) {
            out.append(.log(EventLine(.trigger, [("trigger", .string(current.trigger.rawValue)), ("coalesced", false),
                                                 ("continuation", true)])))
            out += startPass(current.trigger, syncs: [], force: false)
        }
        // After the follow-up started, so a grant of the same moment joins it instead of replacing it.
        return out + schedulerOutput(output)
    }
}
