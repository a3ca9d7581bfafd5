import Foundation
import LabKit
import SyncProtocol

/// The heal and the quiesce of a real run: what `TopologyRunner` asks of the processes, over control.
extension LabRun {
    // MARK: - Heal and quiesce (`TopologyRunner`)

    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { log.emit(type, fields) }


    func resumeToHeal(_ name: String) {
        guard let process = members[name]?.process, process.paused else { return }
        process.signal(SIGCONT)
        log.emit(.processResumed, [("target", .string(name)), ("signal", "SIGCONT"), ("by", "heal")])
    }

    func isStopped(_ name: String) -> Bool { members[name]?.process.poll() == true }

    func startAndWait(_ name: String) throws {
        try start(name)
        let member = try self.member(name)
        try member.control.waitReady(timeout: readyTimeout(name), alive: { member.process.poll() == false })
    }

    /// How long a process may take to answer its first `ping`: 20 s, and a quarter of a second more for each device a
    /// pool opens first (its ledgers, keys and sockets: 250 devices took 20 s in a debug build beside seven other
    /// pools on two loaded cores). Its exit ends the wait at once, so a long limit costs nothing when it fails.
    func readyTimeout(_ name: String) -> Double { 20 + 0.25 * Double(poolDevices[name]?.count ?? 0) }

    func serverStats() -> JSONValue? { (try? members["server"]?.control.call("stats"))?.data }

    func forcedPass(_ device: String) -> JSONValue? {
        guard outsideFailure(device) == nil else { return nil }
        return (try? members[device]?.control.call("sync", ["force": true], timeoutMs: 30_000))?.data
    }

    func forcedPasses(inPool pool: String) -> [(String, JSONValue)] {
        let ack = try? members[pool]?.control.call("syncAll", ["force": true, "timeoutMs": 30_000], timeoutMs: 40_000)
        return ack?.data?["devices"]?.objectValue ?? []
    }

    /// The heal's commands pipelined per process (`ControlClient.pipeline`), one process after another: each gets the
    /// ack `control` would get and a failure the same note, but a pool's 750 commands cost its work, not 750 round
    /// trips (10,000 pooled devices: 30,000 commands).
    func controlAll(_ commands: [(target: String, command: String, args: [String: JSONValue])]) {
        var byProcess: [String: [(target: String, command: String, args: [String: JSONValue])]] = [:]
        var processOrder: [String] = []
        for command in commands {
            let process = processName(command.target)
            if byProcess[process] == nil { processOrder.append(process) }
            byProcess[process, default: []].append(command)
        }
        for name in processOrder {
            let list = byProcess[name] ?? []
            let fail = { (index: Int, error: Error) in
                self.notes.append("heal: \(list[index].target) \(list[index].command): \(error)")
            }
            guard let member = members[name], member.process.running, !member.process.paused else {
                list.indices.forEach { fail($0, LabError.io("\(name) is not running")) }
                continue
            }
            let requests = list.map { command in
                (command.command, command.target == name ? command.args
                    : command.args.merging(["device": .string(command.target)]) { $1 })
            }
            do {
                for (index, outcome) in try member.control.pipeline(requests).enumerated() {
                    if case .ack(let ack) = outcome {
                        let (target, command) = (list[index].target, list[index].command)
                        if !ack.ok { fail(index, LabError.io("\(target) refused \(command): \(ack.detail)")) }
                    } else if let failure = member.control.failure(outcome, command: list[index].command) {
                        fail(index, failure)
                    }
                }
            } catch {
                list.indices.forEach { fail($0, error) }
            }
        }
    }

    /// `TopologyRunner.quiesce` on the wall clock: `heal.timeoutSec`, with 20 ms between rounds.
    func quiesce() {
        let deadline = Date().addingTimeInterval(topology.healTimeoutSec)
        // An outside program that broke the contract ends the wait: the run stops with its words.
        quiesce(while: { Date() < deadline && outsideFailure() == nil }, pause: { usleep(20_000) })
    }
}
