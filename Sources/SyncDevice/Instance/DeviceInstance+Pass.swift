import LabKit
import SyncProtocol

/// The pass (DESIGN.md, seed 001): hello if needed; reclaim expired leases and claim a bounded batch; send it with
/// its idempotency keys and record each outcome; pull bounded pages from the cursor, each applied with the cursor
/// move in one transaction; record the next desired run; stop.
extension DeviceInstance {
    mutating func startPass(_ trigger: Trigger, limit: Double?, now: Double, tokens: [Int], ignoreBackoff: Bool)
        -> [DeviceDirective]
    {
        let id = nextPassID
        nextPassID += 1
        if Trigger.scheduled.contains(trigger) {
            scheduledRuns.append(now)
            if scheduledRuns.count > 1_000 { scheduledRuns.removeFirst(scheduledRuns.count - 1_000) }
        }
        pass = RunningPass(id: id, trigger: trigger, started: now,
                           deadline: limit.map { now + $0 * settings.executionScale }, tokens: tokens,
                           ignoreBackoff: ignoreBackoff)
        let start = DeviceDirective.event(.passStart(pass: id, trigger: trigger, limitSec: limit))
        if environment.online && sessionReady {
            // Straight to the claim: the pass's row is written in the claim's transaction (one commit, not two).
            return [start] + proceed(to: .claim, now: now, beginning: trigger)
        }
        var out: [DeviceDirective] = [.beginPass(id: id, trigger: trigger, at: now), start]
        if !environment.online {
            out += endPass(outcome: .offline, now: now)
        } else {
            out += proceed(to: .claim, now: now)
        }
        return out
    }

    /// Goes on with `step`, saying hello first when the server has not accepted one on this connection.
    /// `beginning`: the pass has no row yet; the claim writes it (see `ClaimRequest.beginsPass`).
    mutating func proceed(to step: RunningPass.Step, now: Double, beginning: Trigger? = nil) -> [DeviceDirective] {
        if step == .pull, let current = pass, !settings.pullOn.pulls(current.trigger) {
            // The switch `pullOn`: this trigger's pass does not repair the cursor; only what it sent is settled.
            let reason = settings.pullOn == .pushOnly ? "pullOn=pushOnly: only a hint's pass pulls"
                : "pullOn=scheduledOnly: only the platform's scheduled runs pull"
            return [.log(EventLine(.passSkippedPull, [
                ("pass", .int(current.id)), ("trigger", .string(current.trigger.rawValue)),
                ("reason", .string(reason)), ("cursor", .int(cursor)), ("head", .int(head)),
            ]))] + endPass(outcome: .completed, now: now)
        }
        guard var pass else { return [] }
        defer { self.pass = pass }
        guard sessionReady else {
            pass.phase = .hello(deadline: now + settings.replyTimeoutSim, then: step)
            let hello = Hello(device: identity.device, account: identity.account, token: identity.token,
                              platform: identity.platform)
            return [.sendToServer(.hello(hello))]
        }
        switch step {
        case .claim:
            pass.phase = .claiming
            var request = ClaimRequest(purpose: .pass(pass.id), limit: settings.batch, now: now,
                                       leaseSec: settings.leaseSec, ignoreBackoff: pass.ignoreBackoff,
                                       beginsPass: beginning)
            request.leases = settings.leases
            request.renewKeys = settings.keyPerAttempt
            request.newestFirst = settings.outboxOrder == .newestFirst
            return [.claim(request)]
        case .push:
            let req = takeReq()
            pass.phase = .pushing(req: req, deadline: now + settings.replyTimeoutSim)
            pass.sent = pass.claimed.count
            var push = Push(req: req, ops: pass.claimed.map(\.op))
            if settings.pullOn.pulls(pass.trigger) {
                // The pass pulls next: the page from the cursor comes with the results, read after the commit.
                push.cursor = cursor
                push.limit = settings.pageLimit
            }
            var out: [DeviceDirective] = [.sendToServer(.push(push))]
            for claimed in pass.claimed {
                var fields: [(String, JSONValue)] = [("key", .string(claimed.op.key)),
                                                     ("attempt", .int(claimed.attempt)), ("pass", .int(pass.id))]
                if claimed.key != claimed.op.key { fields.append(("op", .string(claimed.key))) }
                out.append(.log(EventLine(.opSent, fields)))
            }
            // Sending costs execution: a window may run out while the batch is on the wire.
            charge(&pass, Double(pass.claimed.count) * settings.opCostSec)
            return out
        case .pull:
            let req = takeReq()
            pass.phase = .pulling(req: req, deadline: now + settings.replyTimeoutSim)
            return [.sendToServer(.pull(Pull(req: req, cursor: cursor, limit: settings.pageLimit,
                                             account: identity.account)))]
        }
    }

    /// Charges `seconds` of execution to the pass: its platform deadline (if any) comes that much earlier.
    func charge(_ pass: inout RunningPass, _ seconds: Double) {
        guard seconds > 0 else { return }
        pass.charged += seconds
        if let deadline = pass.deadline { pass.deadline = deadline - seconds * settings.executionScale }
    }

    /// Whether the running pass's execution limit has run out (time passed plus the work charged).
    func passExpired(now: Double) -> Bool {
        guard let deadline = pass?.deadline else { return false }
        return now >= deadline
    }

    mutating func takeReq() -> Int {
        defer { nextReq += 1 }
        return nextReq
    }

    /// The batch a `claim` directive produced.
    public mutating func onClaimed(_ result: ClaimResult, now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        switch result.purpose {
        case .beacon:
            return finishing(beacon(result.ops, now: now))
        case .pass(let id):
            guard var current = pass, current.id == id, current.phase == .claiming else {
                // Nothing waits for this batch any more: release it as unknown so the next pass resends it.
                return finishing(releaseUnknown(result.ops, reason: "claimed for pass \(id), which ended", now: now))
            }
            var out: [DeviceDirective] = []
            if result.reclaimed > 0 {
                out.append(.log(EventLine(.leaseReclaimed, [("count", .int(result.reclaimed)), ("pass", .int(id))])))
            }
            if result.stranded > 0 {
                out.append(.log(EventLine(.leaseStranded, [
                    ("count", .int(result.stranded)), ("pass", .int(id)),
                    ("reason", "leases off: ops claimed by a pass that died stay sending, and nothing reclaims them"),
                ])))
            }
            for claimed in result.ops where claimed.key != claimed.op.key {
                out.append(.log(EventLine(.opKeyRenewed, [
                    ("key", .string(claimed.key)), ("to", .string(claimed.op.key)), ("attempt", .int(claimed.attempt)),
                    ("reason", "keyPerAttempt: a resend gets a new idempotency key"),
                ])))
            }
            if settings.outboxOrder == .newestFirst, result.ops.count > 1 {
                out.append(.log(EventLine(.outboxNewestFirst, [
                    ("pass", .int(id)), ("keys", .array(result.ops.map { .string($0.key) })),
                    ("reason", "outboxOrder newestFirst: the batch goes out newest op first"),
                ])))
            }
            current.claimed = result.ops
            current.recorded = !result.passDeferred
            current.workRemains = result.ops.count >= settings.batch
            pass = current
            out += proceed(to: result.ops.isEmpty ? .pull : .push, now: now)
            return finishing(out)
        }
    }

    /// A message from the server.
    public mutating func onServerMessage(_ message: Message, now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        var out: [DeviceDirective] = []
        switch message {
        case .welcome(let welcome):
            sessionReady = true
            head = max(head, welcome.head)
            if let pass, case .hello(_, let step) = pass.phase {
                out += proceed(to: step, now: now)
            }
        case .pushResult(let result):
            if let pass, case .pushing(let req, _) = pass.phase, req == result.req, passExpired(now: now) {
                // The work charged ran the window out before the reply could be handled.
                out += expire(now: now)
                out.append(stale(result.req, "pushResult"))
            } else if let pass, case .pushing(let req, _) = pass.phase, req == result.req {
                out += settle(result, now: now)
            } else {
                out.append(stale(result.req, "pushResult"))
            }
        case .page(let page):
            if let pass, case .pulling(let req, _) = pass.phase, req == page.req {
                out += apply(page, now: now)
            } else {
                out.append(stale(page.req, "page"))
            }
        case .error(let error):
            out += onServerError(error, now: now)
        case .hello, .push, .pull, .notice, .register, .registered, .deviceState, .hint, .control, .controlAck:
            out.append(.log(EventLine(.messageUnexpected, [("from", "server"), ("type", .string(message.type))])))
        }
        return finishing(out)
    }

    /// A frame from the server that did not decode.
    public mutating func onServerGarbage(_ error: ProtocolError, now: Double) -> [DeviceDirective] {
        finishing([.log(EventLine(.replyMalformed, [("from", "server"), ("reason", .string(error.description))]))])
    }

    func stale(_ req: Int, _ type: String) -> DeviceDirective {
        // A reply that arrives after its timeout: the ops it answers are already confirmationDelayed and will be
        // resent with the same keys, so ignoring it is safe.
        .log(EventLine(.replyStale, [("req", .int(req)), ("type", .string(type))]))
    }

    /// Records one outcome per claimed op, then applies the page that came with them or pulls.
    mutating func settle(_ result: PushResult, now: Double) -> [DeviceDirective] {
        guard var current = pass else { return [] }
        var byKey: [String: OpResult] = [:]
        for item in result.results where byKey[item.key] == nil { byKey[item.key] = item }
        var outcomes: [OpOutcome] = []
        for claimed in current.claimed {
            // The reply is mapped back to the op by the key it was sent with.
            guard let item = byKey[claimed.op.key] else {
                outcomes.append(OpOutcome(key: claimed.key,
                                          kind: .unknown(retryAt: now, reason: "the reply had no result for this key")))
                continue
            }
            switch item.outcome {
            case .applied, .duplicate:
                if let seq = item.seq { head = max(head, seq) }
                outcomes.append(OpOutcome(key: claimed.key, kind: .acknowledged(seq: item.seq)))
            case .rejected where settings.retryPermanent:
                // The switch `retryPermanent`: a permanent refusal is treated as transient, with no attempt cap.
                let reason = "rejected (\(item.reason ?? "by the server")), retried anyway: retryPermanent"
                outcomes.append(OpOutcome(key: claimed.key, kind: .retry(
                    at: now + settings.backoff(afterAttempt: claimed.attempt), reason: reason)))
            case .rejected:
                outcomes.append(OpOutcome(key: claimed.key,
                                          kind: .needsAttention(reason: item.reason ?? "rejected by the server")))
            case .retryLater:
                outcomes.append(transient(claimed, reason: item.reason ?? "retry later", now: now))
            }
        }
        current.claimed = []
        if let page = result.page, page.req == result.req, settings.pullOn.pulls(current.trigger) {
            // The page the push asked for: applied as a pull's (and in the same commit as the outcomes).
            current.phase = .pulling(req: result.req, deadline: now + settings.replyTimeoutSim)
            pass = current
            return record(outcomes, now: now) + apply(page, now: now)
        }
        pass = current
        return record(outcomes, now: now) + proceed(to: .pull, now: now)
    }

    /// A transient failure: back off, or give up once the attempts are spent.
    func transient(_ claimed: ClaimedOp, reason: String, now: Double) -> OpOutcome {
        if claimed.attempt >= settings.maxAttempts && !settings.retryPermanent {
            return OpOutcome(key: claimed.key,
                             kind: .needsAttention(reason: "gave up after \(claimed.attempt) attempts: \(reason)"))
        }
        let delay = settings.backoff(afterAttempt: claimed.attempt)
        let said = delay > settings.backoffCapSec ? "\(reason) (backoffCap off: \(Int(delay)) s, over the cap)" : reason
        return OpOutcome(key: claimed.key, kind: .retry(at: now + delay, reason: said))
    }

    func record(_ outcomes: [OpOutcome], now: Double) -> [DeviceDirective] {
        guard !outcomes.isEmpty else { return [] }
        var out: [DeviceDirective] = [.recordOutcomes(outcomes, at: now)]
        for outcome in outcomes {
            var fields: [(String, JSONValue)] = [("key", .string(outcome.key)), ("outcome", .string(outcome.name))]
            switch outcome.kind {
            case .acknowledged(let seq):
                if let seq { fields.append(("seq", .int(seq))) }
            case .unknown(_, let reason), .needsAttention(let reason):
                fields.append(("reason", .string(reason)))
            case .retry(let at, let reason):
                fields.append(("reason", .string(reason)))
                fields.append(("retryAtSim", .double(at)))
            }
            out.append(.log(EventLine(.opResult, fields)))
        }
        return out
    }

    func releaseUnknown(_ ops: [ClaimedOp], reason: String, now: Double) -> [DeviceDirective] {
        record(ops.map { OpOutcome(key: $0.key, kind: .unknown(retryAt: now, reason: reason)) }, now: now)
    }

    /// Records the end, answers waiting `sync`s, then runs the follow-up or a continuation.
    mutating func endPass(outcome: PassOutcome, now: Double, cutOff: Bool = false, tellScheduler: Bool = true)
        -> [DeviceDirective]
    {
        // `pageCommit: atPassEnd`: the one commit of the pass's pages, or none when it was cut off.
        let held = settleHeldPages(keep: !cutOff)
        guard let ended = pass else { return held }
        pass = nil
        let success = outcome == .completed && ended.reachedHead
        if success {
            successTimes.append(now)
            if successTimes.count > 1_000 { successTimes.removeFirst(successTimes.count - 1_000) }
        }
        var out: [DeviceDirective] = held
        var schedulerEvents: [EventLine] = []
        if tellScheduler {
            let output = scheduler.passEnded(trigger: ended.trigger, started: ended.started, ended: now,
                                             execution: (now - ended.started) / settings.executionScale,
                                             cutOff: cutOff, rng: &rng)
            schedulerEvents = output.events
        }
        let record = PassRecord(id: ended.id, trigger: ended.trigger, started: ended.started, ended: now,
                                outcome: outcome, sent: ended.sent, pulled: ended.pulled, cutOff: cutOff,
                                success: success, cursor: cursor, head: head, nextDesired: scheduler.nextWake)
        out.append(.endPass(record))
        out.append(.event(.passEnd(PassEvent.PassEnd(
            pass: ended.id, trigger: ended.trigger, sent: ended.sent, pulled: ended.pulled, cursor: cursor,
            cutOff: cutOff, outcome: outcome, head: head, durationSec: now - ended.started,
            executionSec: (now - ended.started) / settings.executionScale, nextRunSim: record.nextDesired))))
        out += schedulerEvents.map { .log($0) }
        if !ended.tokens.isEmpty { out.append(.answerSync(tokens: ended.tokens)) }
        if let next = followUp {
            followUp = nil
            out += startFollowUp(next, now: now)
        } else if !queuedPasses.isEmpty && environment.online {
            out += startQueuedPass(now: now)
        } else if ended.workRemains && outcome == .completed && environment.online
            && scheduler.allowsContinuation(of: ended.trigger),
            case .run(let limit) = ended.trigger == .manual ? .run(limit: nil) : scheduler.admission(for: ended.trigger)
        {
            // Seed 001: "ask for future scheduling if work remains" — where the platform lets it run now, at once.
            out.append(.log(EventLine(.trigger, [("trigger", .string(ended.trigger.rawValue)), ("coalesced", false),
                                                ("continuation", true)])))
            out += startPass(ended.trigger, limit: limit, now: now, tokens: [], ignoreBackoff: ended.ignoreBackoff)
        }
        return out
    }

    /// `coalesce` off: every trigger that came during the pass (or while offline) queued a full pass of its own; the
    /// first the platform admits now runs. One it refuses (a foreground pass once the app is in the background) is
    /// dropped and the next one tried, so a refusal never strands the rest of the queue.
    mutating func startQueuedPass(now: Double) -> [DeviceDirective] {
        var out: [DeviceDirective] = []
        while !queuedPasses.isEmpty && pass == nil {
            let next = queuedPasses.removeFirst()
            out.append(.log(EventLine(.passQueuedStarting, [("trigger", .string(next.trigger.rawValue)),
                                                             ("stillQueued", .int(queuedPasses.count))])))
            out += startFollowUp(next, now: now)
        }
        return out
    }

    mutating func startFollowUp(_ next: FollowUp, now: Double) -> [DeviceDirective] {
        if next.forced {
            return startPass(next.trigger, limit: nil, now: now, tokens: next.tokens, ignoreBackoff: next.ignoreBackoff)
        }
        let admission = environment.online ? scheduler.admission(for: next.trigger) : .refuse("offline")
        switch admission {
        case .run(let limit):
            return startPass(next.trigger, limit: limit, now: now, tokens: next.tokens,
                             ignoreBackoff: next.ignoreBackoff)
        case .refuse(let reason):
            return [.log(EventLine(.triggerRefused, [("trigger", .string(next.trigger.rawValue)),
                                                     ("reason", .string(reason)), ("followUp", true)]))]
        }
    }

    /// The web page's `sendBeacon` on close: the batch goes out and nobody waits for the answer, so every op in it is
    /// an unknown outcome, resent with the same key by the next pass (the server then says duplicate).
    mutating func beacon(_ ops: [ClaimedOp], now: Double) -> [DeviceDirective] {
        guard !ops.isEmpty else { return [] }
        let req = takeReq()
        var out: [DeviceDirective] = [.sendToServer(.push(Push(req: req, ops: ops.map(\.op))))]
        for claimed in ops {
            out.append(.log(EventLine(.opSent, [("key", .string(claimed.op.key)), ("attempt", .int(claimed.attempt)),
                                                ("pass", .int(0)), ("via", "beacon")])))
        }
        out.append(.log(EventLine(.beaconSent, [("ops", .int(ops.count)), ("req", .int(req))])))
        return out + releaseUnknown(ops, reason: "sendBeacon: fire and forget", now: now)
    }

    /// The ledger failed (disk full, I/O error): the pass ends, the cursor is what the ledger says.
    public mutating func onLedgerFailure(_ message: String, cursor ledgerCursor: Int, now: Double)
        -> [DeviceDirective]
    {
        self.now = max(self.now, now)
        cursor = ledgerCursor
        var out: [DeviceDirective] = [.log(EventLine(.ledgerError, [("message", .string(message))]))]
        if var current = pass {
            current.claimed = []
            pass = current
            out += endPass(outcome: .error, now: now)
        }
        return finishing(out)
    }
}
