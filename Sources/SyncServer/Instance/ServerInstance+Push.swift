import LabKit
import SyncProtocol

extension ServerInstance {
    mutating func onPush(_ push: Push, from peer: Peer) -> [ServerDirective] {
        guard let session = touch(peer) else {
            return refuse(peer, req: push.req, code: .notAuthenticated,
                          message: "push before hello: say hello with the device's token first")
        }
        if faults.drawDropRequest(using: &generator) {
            // Lost before the store sees it: nothing applied, no reply; the device's reply timeout makes it unknown.
            stats.faultsInjected += push.ops.count
            return push.ops.map { .log(injected("dropRequest", device: session.device, key: $0.key)) }
        }
        if faults.drawTransient(using: &generator) {
            // Answered before the store sees it: nothing is applied, every op may be resent with its key.
            var directives: [ServerDirective] = []
            var results: [OpResult] = []
            for op in push.ops {
                let result = OpResult(key: op.key, outcome: .retryLater,
                                      reason: "\(ServerFaults.injectedReason): server busy, send again later")
                results.append(result)
                stats.retryLater += 1
                stats.faultsInjected += 1
                directives.append(.log(injected("transient", device: session.device, key: op.key)))
                directives.append(.log(opEvent(result, op: op, device: session.device, account: session.account)))
            }
            return directives + reply(peer, .pushResult(PushResult(req: push.req, results: results)))
        }
        let rejections = faults.drawRejections(count: push.ops.count, using: &generator)
        var request = PushRequest(peer: peer, req: push.req, device: session.device, account: session.account,
                                  ops: push.ops, injectRejections: rejections)
        request.idempotency = switches.effective(for: session.account).idempotency
        request.failCommit = faults.failCommit > 0 && faults.drawFailCommit(using: &generator)
        if let cursor = push.cursor, let limit = push.limit {
            request.page = PushRequest.PageAsk(cursor: cursor, limit: limit)
        }
        return [.apply(request)]
    }

    /// The store decided the push and has not committed it yet: what the switches `noticeBeforeCommit` and
    /// `replyBeforeCommit` send now (nothing in the lab's design, which sends only after the commit).
    public mutating func onDecided(_ request: PushRequest, outcomes: [AppliedOp]) -> [ServerDirective] {
        var directives: [ServerDirective] = []
        let switches = self.switches.effective(for: request.account)
        if switches.noticeBeforeCommit, let notice = notice(for: request, outcomes: outcomes) {
            directives.append(.log(EventLine(.noticeBeforeCommit, [
                ("account", .string(notice.account)), ("head", .int(notice.head)), ("device", .string(request.device)),
                ("reason", "noticeBeforeCommit: the notice leaves before the push is committed"),
            ])))
            directives.append(.notify(notice))
        }
        if switches.replyBeforeCommit {
            directives.append(.log(EventLine(.replyBeforeCommit, [
                ("device", .string(request.device)), ("req", .int(request.req)),
                ("keys", .array(request.ops.map { .string($0.key) })),
                ("reason", "replyBeforeCommit: the results leave before the push is committed"),
            ])))
            // Before the commit there is no page to read: the results go alone.
            directives += replyToPush(request, outcomes: outcomes, withPage: false)
        }
        return directives
    }

    /// The head-moved notice for the changes a push made, nil when it made none.
    func notice(for request: PushRequest, outcomes: [AppliedOp]) -> Notice? {
        let refs = outcomes.compactMap { outcome -> ChangeRef? in
            guard outcome.result.outcome == .applied, let change = outcome.change else { return nil }
            return ChangeRef(seq: change.seq, draft: change.draft, version: change.version)
        }
        guard let last = refs.last else { return nil }
        return Notice(account: request.account, head: last.seq, origin: request.device, changes: refs)
    }

    /// The push's reply, or its injected loss. When the push asked for a page (`Push.cursor`) and `withPage`, the
    /// page is read first (`.pull`, answered in `onPulled`) and goes with the results in one `pushResult`; not while
    /// `slowPullMs` is on, so that fault still slows the device's own pull and never its push.
    mutating func replyToPush(_ request: PushRequest, outcomes: [AppliedOp], withPage: Bool = true)
        -> [ServerDirective]
    {
        if faults.drawDropReply(using: &generator) {
            var directives: [ServerDirective] = []
            for op in request.ops {
                stats.faultsInjected += 1
                directives.append(.log(injected("dropReply", device: request.device, key: op.key)))
            }
            return directives
        }
        let results = outcomes.map(\.result)
        if withPage, faults.slowPullMs == 0, let page = request.page {
            var pull = PullRequest(peer: request.peer, req: request.req, device: request.device,
                                   account: request.account, cursor: page.cursor, limit: page.limit)
            pull.pushResults = results
            return [.pull(pull)]
        }
        return reply(request.peer, .pushResult(PushResult(req: request.req, results: results)))
    }

    /// The store committed the push: events, counters, the head-moved notice, then the reply (unless the fault plan
    /// drops it, which leaves the device with an unknown outcome to resolve by resending).
    public mutating func onApplied(_ request: PushRequest, outcomes: [AppliedOp]) -> [ServerDirective] {
        let switches = self.switches.effective(for: request.account)
        var directives: [ServerDirective] = []
        var refs: [ChangeRef] = []
        for (index, (op, outcome)) in zip(request.ops, outcomes).enumerated() {
            let result = outcome.result
            switch result.outcome {
            case .applied:
                stats.applied += 1
                if result.conflict == true { stats.conflicts += 1 }
                if let change = outcome.change {
                    refs.append(ChangeRef(seq: change.seq, draft: change.draft, version: change.version))
                }
            case .duplicate:
                stats.duplicates += 1
            case .rejected:
                stats.rejected += 1
                if request.injectRejections.contains(index) && !outcome.replay
                    && result.reason == ServerFaults.injectedReason
                {
                    stats.faultsInjected += 1
                    directives.append(.log(injected("reject", device: request.device, key: op.key)))
                }
            case .retryLater:
                stats.retryLater += 1
            }
            directives.append(.log(opEvent(result, op: op, device: request.device, account: request.account,
                                           change: outcome.change)))
            if outcome.reapplied {
                directives.append(.log(EventLine(.opReapplied, [
                    ("device", .string(request.device)), ("key", .string(op.key)), ("seq", .int(result.seq ?? 0)),
                    ("reason", "idempotency off: a key already applied was applied again"),
                ])))
            }
        }
        if let last = refs.last {
            stats.heads[request.account] = max(stats.heads[request.account] ?? 0, last.seq)
            if !switches.noticeBeforeCommit {
                directives.append(.notify(Notice(account: request.account, head: last.seq, origin: request.device,
                                                 changes: refs)))
            }
        }
        if switches.replyBeforeCommit { return directives }
        return directives + replyToPush(request, outcomes: outcomes)
    }

    /// The store could not commit the push: nothing was applied. Lock contention is transient (`retryLater`);
    /// anything else is an `internal` error.
    public mutating func onApplyFailed(_ request: PushRequest, error: ServerError,
                                       decided: [AppliedOp] = []) -> [ServerDirective] {
        var early: [ServerDirective] = []
        let switches = self.switches.effective(for: request.account)
        if switches.noticeBeforeCommit, let notice = notice(for: request, outcomes: decided) {
            early.append(.log(EventLine(.noticePhantom, [
                ("account", .string(notice.account)), ("head", .int(notice.head)),
                ("seqs", .array(notice.changes.map { .int($0.seq) })),
                ("reason", "noticeBeforeCommit: the notice announced changes whose commit then failed"),
            ])))
        }
        if switches.replyBeforeCommit && !decided.isEmpty {
            // The device already holds results for ops the server does not have: acknowledged, then lost.
            let acked = zip(request.ops, decided).filter {
                $0.1.result.outcome == .applied || $0.1.result.outcome == .duplicate
            }.map(\.0.key)
            return early + [.log(EventLine(.ackLost, [
                ("device", .string(request.device)), ("req", .int(request.req)),
                ("keys", .array(acked.map { .string($0) })), ("error", .string(error.description)),
                ("reason", "replyBeforeCommit: acknowledged before the commit, which then failed"),
            ]))]
        }
        return early + onApplyFailedAfterCommit(request, error: error)
    }

    mutating func onApplyFailedAfterCommit(_ request: PushRequest, error: ServerError) -> [ServerDirective] {
        if case .database(_, busy: true) = error {
            var directives: [ServerDirective] = []
            let results = request.ops.map {
                OpResult(key: $0.key, outcome: .retryLater, reason: "database busy, send again later")
            }
            for (op, result) in zip(request.ops, results) {
                stats.retryLater += 1
                directives.append(.log(opEvent(result, op: op, device: request.device, account: request.account)))
            }
            return directives + reply(request.peer, .pushResult(PushResult(req: request.req, results: results)))
        }
        return refuse(request.peer, req: request.req, code: .internal,
                      message: "nothing applied: \(error.description)", device: request.device)
    }

    /// The shell tried to send a notice: `sent` false means it would have blocked and the notice is lost (the
    /// devices' cursors repair that on their next pull).
    public mutating func onNotice(_ notice: Notice, sent: Bool) -> [ServerDirective] {
        let seqs = JSONValue.array(notice.changes.map { .int($0.seq) })
        if sent {
            stats.notices += 1
            return [.log(EventLine(.noticeSent, [
                ("account", .string(notice.account)), ("head", .int(notice.head)), ("origin", .string(notice.origin)),
                ("seqs", seqs),
            ]))]
        }
        stats.noticesDropped += 1
        return [.log(EventLine(.noticeDropped, [
            ("account", .string(notice.account)), ("head", .int(notice.head)), ("origin", .string(notice.origin)),
            ("seqs", seqs), ("reason", .string("the notice socket would block")),
        ]))]
    }

    // MARK: - Events

    func injected(_ kind: String, device: String, key: String) -> EventLine {
        EventLine(.faultInjected, [("kind", .string(kind)), ("device", .string(device)), ("key", .string(key))])
    }

    func opEvent(_ result: OpResult, op: Op, device: String, account: String, change: Change? = nil) -> EventLine {
        switch result.outcome {
        case .applied:
            return EventLine(.opApplied, [
                ("device", .string(device)), ("account", .string(account)), ("key", .string(op.key)),
                ("seq", .int(result.seq ?? 0)), ("draft", .string(op.draft)),
                ("action", .string((change?.action ?? op.action).rawValue)), ("version", .int(result.version ?? 0)),
                ("conflict", .bool(result.conflict ?? false)),
            ])
        case .duplicate:
            return EventLine(.opDuplicate, [
                ("device", .string(device)), ("key", .string(op.key)), ("seq", result.seq.map { .int($0) } ?? .null),
            ])
        case .rejected:
            return EventLine(.opRejected, [
                ("device", .string(device)), ("key", .string(op.key)), ("reason", .string(result.reason ?? "")),
            ])
        case .retryLater:
            return EventLine(.opRetryLater, [
                ("device", .string(device)), ("key", .string(op.key)), ("reason", .string(result.reason ?? "")),
            ])
        }
    }
}
