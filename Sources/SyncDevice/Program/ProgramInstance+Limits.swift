import LabKit
import SyncProtocol

/// The platform's execution limits, enforced on an outside program as on the lab's own device
/// (DeviceInstance+Interruptions.swift): at the end of a pass's window the program is told `expire` (iOS's
/// `expirationHandler`, Android's worker stop); a pass still running after the grace is ended by SIGKILL of the
/// program, as the OS kills an app, and the program is started again (its durable state is its own SQLite file).
extension ProgramInstance {
    /// The grace between `expire` and the kill, in simulated seconds.
    var expireGraceSim: Double { settings.expireGraceSec * settings.executionScale }

    /// Time passed: the running pass's window ran out (`expire`), or its grace did (the kill).
    mutating func passLimits(now: Double) -> [ProgramDirective] {
        guard !failed, var current = pass else { return [] }
        if let killAt = current.killAt {
            guard now >= killAt else { return [] }
            let grace = Self.format(settings.expireGraceSec)
            return killProgram(reason: "its pass \(current.id) did not end within \(grace) s of execution after expire",
                               tellScheduler: true)
        }
        guard let deadline = current.deadline, let limit = current.limit, now >= deadline else { return [] }
        current.killAt = now + expireGraceSim
        pass = current
        return [
            .log(EventLine(.programExpire, [
                ("pass", .int(current.id)), ("trigger", .string(current.trigger.rawValue)),
                ("limitSec", .double(limit)), ("graceSec", .double(settings.expireGraceSec)),
            ])),
            // Not a request: its answer is the pass's own reply, which ends the pass as cut off.
            .toProgram(.object([("req", .int(nextRequest())), ("type", "expire"), ("pass", .int(current.id))])),
        ]
    }

    mutating func nextRequest() -> Int {
        defer { nextReq += 1 }
        return nextReq
    }

    /// The OS kills the app's process: the program dies by SIGKILL with whatever it was doing, and the lab side
    /// starts it again (`restarted`). A running pass ends `killed`, cut off; `tellScheduler` false when the user
    /// killed the app (force quit), which the platform does not hold against its budget.
    mutating func killProgram(reason: String, tellScheduler: Bool) -> [ProgramDirective] {
        var out: [ProgramDirective] = [.killProgram(reason: reason, pass: pass?.id)]
        // Whatever the dead program was asked and had not answered is answered now, not left to time out.
        var waiters: [PendingControl] = []
        for (req, entry) in waiting {
            switch entry.what {
            case .edit(let pending), .status(let pending): waiters.append(pending)
            case .pass, .network: break
            }
            waiting[req] = nil
        }
        for pending in waiters { out += answer(pending, .refused("the outside program was killed: \(reason)")) }
        guard let current = pass else { return out }
        pass = nil
        out.append(passEndLine(current, sent: 0, pulled: 0, cutOff: true, outcome: "killed", success: false))
        if tellScheduler { out += schedulerOutput(schedulerPassEnded(current, cutOff: true)) }
        for sync in current.syncs { out += answer(sync, .ack("pass \(current.id) ended killed", statusData())) }
        return out
    }

    /// The program started again after a kill said `ready`: what it says of its durable state is read again, it is
    /// told the network it is on, and the follow-up a trigger left during the killed pass runs.
    public mutating func restarted(ready: JSONValue, now: Double) -> [ProgramDirective] {
        self.now = max(self.now, now)
        guard !failed else { return [] }
        cursor = max(cursor, ready["cursor"]?.intValue ?? 0)
        head = max(head, cursor, ready["head"]?.intValue ?? 0)
        pending = ready["pending"]?.intValue ?? pending
        var out: [ProgramDirective] = []
        if !environment.online { out += ask(.network, [("type", "network"), ("online", false)]) }
        if pass == nil, let next = followUp {
            followUp = nil
            out += startPass(next.trigger, syncs: next.syncs, force: next.force)
        }
        return finishing(out)
    }
}
