import LabKit
import SyncProtocol

/// How a pass ends early: a server error, a timeout, an expired window, a kill (DeviceInstance+Pass.swift).
extension DeviceInstance {
    mutating func onServerError(_ error: ErrorReply, now: Double) -> [DeviceDirective] {
        let line = EventLine(.serverError, [("req", error.req.map { .int($0) } ?? .null),
                                            ("code", .string(error.code.rawValue)),
                                            ("message", .string(error.message))])
        guard var current = pass else { return [.log(line)] }
        switch current.phase {
        case .hello where error.req == nil:
            sessionReady = false
            return [.log(EventLine(.helloRefused, [("code", .string(error.code.rawValue)),
                                                   ("message", .string(error.message))]))]
                + endPass(outcome: .refused, now: now)
        case .pushing(let req, _) where error.req == req:
            if let again = helloAgain(after: error, resending: .push, line: line, now: now) { return again }
            // The whole push was refused and nothing was written: a transient failure for every op in it.
            let reason = "server refused the push: \(error.code.rawValue): \(error.message)"
            let outcomes = current.claimed.map { transient($0, reason: reason, now: now) }
            current.claimed = []
            pass = current
            return [.log(line)] + record(outcomes, now: now) + proceed(to: .pull, now: now)
        case .pulling(let req, _) where error.req == req:
            if let again = helloAgain(after: error, resending: .pull, line: line, now: now) { return again }
            return [.log(line)] + endPass(outcome: .error, now: now)
        case .hello, .claiming, .pushing, .pulling:
            return [.log(line)]
        }
    }

    /// The server lost our session (it restarted): hello again, then resend the same batch or pull (`step`). Once a
    /// pass: nil when `error` is another or this pass has said hello again already, and the error stands.
    private mutating func helloAgain(after error: ErrorReply, resending step: RunningPass.Step, line: EventLine,
                                     now: Double) -> [DeviceDirective]? {
        guard error.code == .notAuthenticated, var current = pass, !current.reHelloed else { return nil }
        sessionReady = false
        current.reHelloed = true
        pass = current
        return [.log(line)] + proceed(to: step, now: now)
    }

    /// Reply timeouts and the execution limit.
    mutating func passTimeouts(now: Double) -> [DeviceDirective] {
        guard let current = pass else { return [] }
        if let deadline = current.deadline, now >= deadline {
            return expire(now: now)
        }
        if let pending = current.pendingPage {
            return now >= pending.due ? applyPendingPage(now: now) : []
        }
        switch current.phase {
        case .hello(let deadline, _) where now >= deadline:
            let released = releaseUnknown(current.claimed, reason: "no welcome in time", now: now)
            return released + endPass(outcome: .unreachable, now: now)
        case .pushing(_, let deadline) where now >= deadline:
            // No reply: the server may or may not have applied the batch. Same keys next time.
            sessionReady = false
            let released = releaseUnknown(current.claimed, reason: "no reply in time", now: now)
            pass?.claimed = []
            return released + endPass(outcome: .timeout, now: now)
        case .pulling(_, let deadline) where now >= deadline:
            sessionReady = false
            return endPass(outcome: .timeout, now: now)
        case .hello, .claiming, .pushing, .pulling:
            return []
        }
    }

    /// The expiration path (iOS `expirationHandler`, Android's worker stop): release what is in flight as unknown
    /// outcomes, end the pass as cut off. Whatever was committed stays; the rest is picked up by the next pass.
    mutating func expire(now: Double) -> [DeviceDirective] {
        guard let current = pass else { return [] }
        if identity.platform == .ios {
            var out: [DeviceDirective] = [.log(EventLine(.iosWindowExpired, [
                ("pass", .int(current.id)), ("trigger", .string(current.trigger.rawValue)),
                ("handled", .bool(settings.expirationHandler)), ("inFlight", .int(current.claimed.count)),
                ("chargedSec", .double(current.charged)),
                ("reason", settings.expirationHandler
                    ? "expirationHandler: work cancelled, setTaskCompleted(success: false)"
                    : "no expirationHandler: the system kills the task, reports it failed and shrinks the budget"),
            ]))]
            if !settings.expirationHandler {
                // Nothing cancels the work: what was in flight stays claimed until its lease runs out.
                out += dropPendingPage(reason: "the task was killed at its expiration")
                return out + endPass(outcome: .cutOff, now: now, cutOff: true)
            }
            let released = releaseUnknown(current.claimed, reason: "cut off: execution time expired", now: now)
            pass?.claimed = []
            return out + released + endPass(outcome: .cutOff, now: now, cutOff: true)
        }
        let released = releaseUnknown(current.claimed, reason: "cut off: execution time expired", now: now)
        pass?.claimed = []
        return released + endPass(outcome: .cutOff, now: now, cutOff: true)
    }

    /// A page whose cursor was committed before it was applied dies with the pass: its changes are never applied.
    mutating func dropPendingPage(reason: String) -> [DeviceDirective] {
        guard let pending = pass?.pendingPage else { return [] }
        pass?.pendingPage = nil
        return [.log(EventLine(.pageLost, [
            ("pass", .int(pending.page.pass)), ("from", .int(pending.page.from)), ("to", .int(pending.page.to)),
            ("seqs", .array(pending.page.changes.map { .int($0.seq) })), ("reason", .string(reason)),
        ]))]
    }

    /// The process running the pass is gone (force quit, tab closed): nothing is released; leases expire and the
    /// next pass reclaims them, exactly as after a SIGKILL.
    mutating func kill(now: Double, reason: String) -> [DeviceDirective] {
        // What was to run after this pass dies with the process too: nothing starts in an app that is gone.
        var out = dropWaitingPasses(reason: reason)
        guard let current = pass else { return out }
        out.append(.log(EventLine(.passKilled, [("pass", .int(current.id)), ("reason", .string(reason))])))
        out += dropPendingPage(reason: "cursor committed before the page, then \(reason)")
        if identity.platform == .ios && settings.reschedule == .last && current.trigger == .opportunistic {
            out.append(.log(EventLine(.iosScheduleLost, [
                ("pass", .int(current.id)),
                ("reason", "reschedule=last: the task died before the handler's last line submitted the next request"),
            ])))
        }
        return out + endPass(outcome: .killed, now: now, cutOff: true, tellScheduler: false)
    }

    /// The follow-up and the queued passes are forgotten (`passes.dropped`); a `sync` waiting in one is answered.
    mutating func dropWaitingPasses(reason: String) -> [DeviceDirective] {
        let waiting = (followUp.map { [$0] } ?? []) + queuedPasses
        followUp = nil
        queuedPasses = []
        guard !waiting.isEmpty else { return [] }
        var out: [DeviceDirective] = [.log(EventLine(.passesDropped, [
            ("count", .int(waiting.count)), ("triggers", .array(waiting.map { .string($0.trigger.rawValue) })),
            ("reason", .string("\(reason): the passes waiting to run died with the app")),
        ]))]
        let tokens = waiting.flatMap(\.tokens)
        if !tokens.isEmpty { out.append(.answerSync(tokens: tokens)) }
        return out
    }
}
