import LabKit
import SyncProtocol

/// A scenario step, the heal and the quiesce, which both runners (`LabRun`, `SimRun`) carry out the same way: each
/// brings its own processes (real ones, or instances in the simulated world), control calls and clock.
protocol TopologyRunner: EventEmitter {
    var topology: Topology { get }
    /// Every process, in the order it started.
    var order: [String] { get }
    /// Pooled device → the pool process hosting it.
    var poolOf: [String: String] { get }
    /// Pool process → its devices, in spec order.
    var poolDevices: [String: [String]] { get }
    /// Crash points armed by `crash` steps and not yet fired, by process.
    var armedCrashes: [String: [(point: String, target: String)]] { get set }
    var notes: [String] { get set }

    func say(_ text: String)
    /// A control command for a process, or for a pooled device; the answer's data.
    func control(_ name: String, _ command: String, _ args: [String: JSONValue]) throws -> JSONValue?
    /// A `kill`, `restart`, `pause` or `resume` step for a process, or for a pooled device's pool.
    func signal(_ device: String, _ command: String) throws
    /// A `partition` (two halves of process or host names) or `heal` of the network between hosts.
    func network(_ command: String, halves: [[String]]) throws
    /// What the runner does once a step has played (the terminal's line of it, for a real run).
    func played(_ step: ScenarioStep, _ fields: [(String, JSONValue)])
    /// Resumes `name` if it is paused, with its `process.resumed` event (`by: heal`).
    func resumeToHeal(_ name: String)
    /// Whether `name` has stopped (killed, or crashed at a point) and the heal must start it again.
    func isStopped(_ name: String) -> Bool
    /// The cursor check on the ledgers of a stopped process, before it starts again.
    func checkState(of target: String)
    /// Starts `name` and waits until it answers over control.
    func startAndWait(_ name: String) throws
    /// The server's `stats` answer, or nil.
    func serverStats() -> JSONValue?
    /// The status a forced pass on an unpooled device answers, or nil.
    func forcedPass(_ device: String) -> JSONValue?
    /// The statuses of the forced passes every device of a pool runs at once, by device.
    func forcedPasses(inPool pool: String) -> [(String, JSONValue)]
    /// Sends the heal's commands, in order for each process; what one cannot do goes to the notes as
    /// `heal: TARGET COMMAND: why`. By default one `control` after another; a real run pipelines them per process.
    func controlAll(_ commands: [(target: String, command: String, args: [String: JSONValue])])
}

extension TopologyRunner {
    /// Plays one step of the timeline: `scenario.action` with what it did, or `scenario.failed` and a note.
    func perform(_ step: ScenarioStep) {
        let (play, stepFields) = step.play
        var fields = stepFields
        do {
            switch play {
            case .control(let target, let command, let args):
                let data = try control(target, command, args)
                // The launcher's own record of the user's intent: the key the device gave the op it saved.
                if case .edit = step.action, let key = data?["key"]?.stringValue {
                    fields.append(("key", .string(key)))
                    // What the user read of the draft as the edit began: the read-your-writes observation.
                    if let saw = data?["saw"] { fields.append(("saw", saw)) }
                }
                if case .crash(let target, let point, _) = step.action {
                    armedCrashes[poolOf[target] ?? target, default: []].append((point, target))
                }
            case .signal(let target, let command):
                try signal(target, command)
            case .network(let command, let cut):
                try network(command, halves: cut.halves)
            }
            emit(.scenarioAction, fields)
            played(step, fields)
        } catch {
            fields.append(("error", .string("\(error)")))
            emit(.scenarioFailed, fields)
            notes.append("step at \(formatSim(step.at)) (line \(step.line)) \(step.action.name) failed: \(error)")
        }
    }

    /// Faults off, every process running, every device online and in the foreground with refresh on.
    func heal() {
        // A point armed but never reached must not fire while the checks wait for quiet.
        for (name, armed) in armedCrashes.sorted(by: { $0.key < $1.key }) {
            for target in Set(armed.map(\.target)).sorted() { attempt(target, "crashAt", ["off": true]) }
            notes.append("crash point \(armed.map(\.point).joined(separator: ", ")) on \(name) never fired")
        }
        armedCrashes.removeAll()
        for name in order {
            resumeToHeal(name)
            guard isStopped(name) else { continue }
            checkState(of: name)
            do {
                try startAndWait(name)
                emit(.processRestarted, [("target", .string(name)), ("by", "heal")])
            } catch {
                notes.append("heal could not restart \(name): \(error)")
            }
        }
        controlAll(StopChecks.healCommands(topology))
    }

    func controlAll(_ commands: [(target: String, command: String, args: [String: JSONValue])]) {
        for (target, command, args) in commands { attempt(target, command, args) }
    }

    /// A control command the heal sends; what it cannot do goes to the notes.
    private func attempt(_ name: String, _ command: String, _ args: [String: JSONValue] = [:]) {
        do { _ = try control(name, command, args) } catch { notes.append("heal: \(name) \(command): \(error)") }
    }

    /// Forced passes on every device until every op is settled, every cursor is at its account's head, and a whole
    /// round changes nothing. `inTime` says whether the runner's clock is still short of `heal.timeoutSec`;
    /// `pause` lets 20 ms of it pass between rounds.
    func quiesce(while inTime: () -> Bool, pause: () -> Void) {
        var previous = QuiesceRound.none
        var rounds = 0
        while inTime() {
            rounds += 1
            var heads: [String: Int] = [:]
            if let h = serverStats()?["heads"]?.objectValue {
                for (account, value) in h { heads[account] = value.intValue ?? 0 }
            }
            var statuses: [String: JSONValue] = [:]
            for device in topology.devices where poolOf[device.id] == nil {
                if let data = forcedPass(device.id) { statuses[device.id] = data }
            }
            // One round trip per pool: every pooled device runs its forced pass at once and the pool answers when
            // all have ended.
            for pool in poolDevices.keys.sorted() {
                for (id, data) in forcedPasses(inPool: pool) { statuses[id] = data }
            }
            let round = QuiesceRound(topology: topology, heads: heads, statuses: statuses)
            if round.isQuiet(after: previous) {
                emit(.quiesceDone, [("rounds", .int(rounds))])
                say("quiet after \(rounds) rounds")
                return
            }
            previous = round
            pause()
        }
        notes.append("quiesce did not settle within \(Int(topology.healTimeoutSec)) s; "
            + "the checks see the state as it was")
        // What was still unsettled in the last round: pending ops, or a cursor short of its account's head.
        emit(.quiesceTimeout, previous.timeoutFields(rounds: rounds, in: topology))
    }
}
