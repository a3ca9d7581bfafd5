import LabKit
import SyncDevice
import SyncProtocol
import SyncServer

extension InvariantChecks {
    // MARK: - open-reaches-head

    /// During the scenario, a pass that an app open started (`foreground`, `visibility`) reaches the head the server
    /// had when the pass started: what the user sees on opening is current. A pass that was offline, refused, cut
    /// off, killed or bounded by its page limit is excused and counted.
    static func openReachesHead(_ data: RunData) -> InvariantResult {
        let name = "open-reaches-head"
        var violations: [Violation] = []
        var appliedWalls: [String: [(wall: Int64, seq: Int)]] = [:]
        for event in data.events where event.proc == "server" && event.type == EventCatalogue.opApplied {
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
            if event.type == EventCatalogue.passStart {
                let opened = ["foreground", "visibility"].contains(event.string("trigger") ?? "")
                if opened, event.sim < data.scenarioEndSim {
                    starts[key] = event
                } else {
                    starts[key] = nil
                }
                continue
            }
            guard event.type == EventCatalogue.passEnd else { continue }
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
                    "\(device.id) opened at \(formatSim(start.sim)) (\(start.string("trigger") ?? "")): "
                        + "the server's head "
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
        if let timeout = launcher.last(where: { $0.type == EventCatalogue.quiesceTimeout }) {
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
        guard let done = launcher.last(where: { $0.type == EventCatalogue.quiesceDone }) else {
            let ran = launcher.contains { $0.type == EventCatalogue.processStarted }
            return InvariantResult(name, ran ? [Violation(device: nil, account: nil, "the run never quiesced")] : [],
                                   held: "no launcher record (a hand-made run folder)")
        }
        return InvariantResult(name, [], held: "every op settled and every cursor at its head after "
            + "\(done.int("rounds") ?? 0) rounds")
    }
}
