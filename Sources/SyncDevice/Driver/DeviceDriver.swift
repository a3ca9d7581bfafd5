import LabKit
import SQLite
import SyncProtocol

/// One device's logic between its instance and its machine, the same for a real process, a pool's device and the
/// simulation: it feeds the instance what happened, carries out the directives it returns against the ledger, in
/// order, and hands what must leave to its `DeviceIO`. The order it keeps is the lab's durability rule: a step's
/// ledger writes are one transaction, committed before anything they depend on leaves and at the step's end, so a
/// kill at any moment loses only work nobody outside has seen.
public final class DeviceDriver {
    public let configuration: DeviceConfiguration
    unowned let io: DeviceIO
    /// Replaced (file deleted and made again) by a `reinstall`; never nil otherwise.
    public internal(set) var ledger: Ledger!
    public internal(set) var instance: DeviceInstance
    /// `instance.nextWake`, read in place: a pool asks it of every device at each sweep of its loop, and reading it
    /// through a copy of the instance (`DeviceShell.instance`) copied 250 instances a turn. (Not a cache kept by a
    /// `didSet`: an observed property turns every `drive` step's in-place mutation into a copy: +2.5 % per pass.)
    /// Through an `inout`: a getter called on the stored property itself still copied the instance first (perf of a
    /// pool: `outlined init with copy of DeviceInstance` under `DevicePool.tick`).
    public var nextWake: Double? { Self.nextWake(of: &instance) }

    private static func nextWake(of instance: inout DeviceInstance) -> Double? { instance.nextWake }
    let brokerEnabled: Bool
    /// `sync` requests waiting for their pass to end, by token.
    var syncWaiters: [Int: SyncWaiter] = [:]
    var nextToken = 1
    /// Set by the control command `stop`; the shell then finishes.
    public internal(set) var stopping = false
    /// Set when the process died in the middle of a step (the simulation's crash points and crash-anywhere): it
    /// carries out nothing more, and its shell is dropped.
    public var killed: Bool { mortality.killed }
    /// How many `drive` calls are under way (they nest through control replies and pool callbacks).
    public internal(set) var driveDepth = 0
    /// Set while the instance is told of a failed commit, so a commit that fails again does not recurse.
    var recoveringCommit = false
    /// Where this process dies (`--crash-at`, control `crashAt`); in a pool, the whole pool dies.
    var mortality: Mortality
    /// What the last `saveEdit` directive saved, or why it could not, for the `edit` command's answer.
    var lastSave: Result<SavedEdit, LedgerFailure>?

    /// Opens the ledger through `io` and restores the instance from it.
    public init(_ configuration: DeviceConfiguration, io: DeviceIO) throws {
        self.configuration = configuration
        self.io = io
        let ledger = try io.openLedger(wiping: false)
        let restored = try ledger.prepare(identity: configuration.identity, clock: configuration.clock,
                                          settings: configuration.settings, now: io.now)
        self.ledger = ledger
        brokerEnabled = configuration.brokerEndpoint != nil
        mortality = Mortality(armed: configuration.crashAt)
        instance = DeviceInstance(identity: configuration.identity, settings: configuration.settings,
                                  restored: restored, brokerEnabled: brokerEnabled,
                                  rng: SeededGenerator.derived(seed: configuration.seed,
                                                               name: configuration.identity.device))
    }

    var now: Double { io.now }

    // MARK: - Lifetime

    /// Writes `process.started` and starts the instance.
    public func begin() {
        io.emit(.processStarted, [
            ("role", "device"), ("pid", .int(io.pid)), ("device", .string(configuration.identity.device)),
            ("platform", .string(configuration.identity.platform.rawValue)), ("cursor", .int(instance.cursor)),
        ])
        drive { $0.start(now: now) }
    }

    /// Lets the instance act on time passing (timeouts, leases, the platform scheduler).
    public func tick() {
        drive { $0.onTick(now: now) }
    }

    /// Releases what is in flight and writes `process.stopped` (a clean stop).
    public func finish() {
        drive { $0.onStop(now: now) }
        io.emit(.processStopped, [("role", "device"), ("pid", .int(io.pid))])
    }

    /// Killed from outside (the simulation's `kill`): pending answers die with the process.
    public func abandon() {
        mortality.markKilled()
        syncWaiters.removeAll()
    }

    // MARK: - Server and broker

    public func onServerFrames(_ frames: [[UInt8]]) {
        switch Codec.decodeOrReply(frames) {
        case .success(let message): drive { $0.onServerMessage(message, now: now) }
        case .failure(let error): drive { $0.onServerGarbage(error, now: now) }
        }
    }

    public func onBrokerFrames(_ frames: [[UInt8]]) {
        switch Codec.decodeOrReply(frames) {
        case .success(let message):
            let keys = Self.bodyKeys(frames, decoded: true)
            drive { $0.onBrokerMessage(message, keys: keys, now: now) }
        case .failure(let error):
            let keys = Self.bodyKeys(frames)
            drive { $0.onBrokerGarbage(error, keys: keys, now: now) }
        }
    }

    /// The JSON keys of a message's raw body frame, sorted: the launcher checks that a hint carried nothing but
    /// references, so the event lists what was on the wire, not what the decoder kept. `decoded`: `Codec` accepted
    /// the frames, so the body is valid JSON and is not checked a second time.
    public static func bodyKeys(_ frames: [[UInt8]], decoded: Bool = false) -> [String] {
        guard frames.count >= 2 else { return [] }
        let keys = decoded ? WireKeys.topLevel(ofChecked: frames[1]) : WireKeys.topLevel(frames[1])
        return keys?.sorted() ?? []
    }

    // MARK: - Directives

    /// A ledger step failed: the rest of that chain of directives is abandoned.
    struct LedgerFailure: Error {
        let message: String
    }

    /// Runs one instance step and carries out its directives; a ledger failure is handed back to the instance.
    ///
    /// The step's ledger writes form one transaction (each write a savepoint of its own) and its events one write:
    /// both are committed before anything they describe leaves the process (`send`, `reply`) and at the step's end.
    public func drive(_ step: (inout DeviceInstance) -> [DeviceDirective]) {
        guard !killed else { return }
        io.stepBegan()
        driveDepth += 1
        defer {
            driveDepth -= 1
            if driveDepth == 0 && !killed { _ = commitLedger() }
            io.stepEnded()
        }
        let directives = step(&instance)
        do {
            try perform(directives)
        } catch is Mortality.Killed {
            return
        } catch {
            recover(from: (error as? LedgerFailure)?.message ?? "\(error)")
        }
    }

    /// Tells the instance a ledger step failed and carries out what it answers.
    func recover(from message: String) {
        let cursor = (try? ledger.cursor()) ?? instance.cursor
        let recovery = instance.onLedgerFailure(message, cursor: cursor, now: now)
        do {
            try perform(recovery)
        } catch is Mortality.Killed {
            return
        } catch {
            io.emit(.ledgerError, [("message", .string("\(error)"))])
        }
    }

    func perform(_ directives: [DeviceDirective]) throws {
        for directive in directives {
            try mortality.alive()
            try carryOut(directive)
            try boundary(.directive)
        }
    }

    func carryOut(_ directive: DeviceDirective) throws {
        switch directive {
        case .sendToServer(let message):
            try send(message, to: .server)
        case .sendToBroker(let message):
            if brokerEnabled { try send(message, to: .broker) }
        case .saveEdit(let edit, let pending):
            // The op and the replica commit first; only then is the edit saved and anything else happens.
            var committed = false
            do {
                let saved = try ledgerStep { try ledger.save(edit, device: configuration.identity.device,
                                                             wall: io.wallMicros) }
                guard try commit() else { throw LedgerFailure(message: "the edit's commit failed") }
                committed = true
                lastSave = .success(saved)
                try reach(.deviceAfterLedgerWrite)
                try perform(instance.onEditSaved(saved, now: now))
                if let pending { try perform(instance.onEditAnswer(pending, saved: .success(saved))) }
            } catch let failure as LedgerFailure where !committed {
                // Nothing was saved: the command is refused and the instance has nothing to learn.
                lastSave = .failure(failure)
                if let pending {
                    try perform(instance.onEditAnswer(pending, saved: .failure(.editNotSaved(failure.message))))
                }
            }
        case .beginPass(let id, let trigger, let at):
            try ledgerStep { try ledger.beginPass(id: id, trigger: trigger, at: at) }
        case .claim(let request):
            // A receiver's pass usually has nothing to send: then its claim is a read, outside the step's transaction.
            let idle = try? ledger.idleClaim(request)
            let result = try idle ?? ledgerStep { try ledger.claim(request) }
            try reach(.deviceAfterClaim, work: result.ops.count)
            try perform(instance.onClaimed(result, now: now))
        case .recordOutcomes(let outcomes, _):
            try ledgerStep { try ledger.record(outcomes, wall: io.wallMicros) }
            emitHiddenOwnWrites()
            try reach(.deviceAfterOutcomeRecord, work: outcomes.count)
        case .applyPage(let page):
            // Today the page and its cursor commit in one transaction, so "before the cursor's commit" is here.
            try reach(.deviceBeforeCursorCommit, work: page.changes.count)
            let settled = try ledgerStep { try ledger.apply(page, wall: io.wallMicros) }
            emitHiddenOwnWrites()
            try reach(.deviceAfterPageCommit, work: page.changes.count)
            for key in settled {
                // The pull proved the server applied an op whose reply was lost: it is settled without a resend.
                io.emit(.opConfirmed, [("key", .string(key)), ("via", "pull"), ("pass", .int(page.pass))])
            }
        case .commitCursor(let seq, _):
            // `cursorCommit: beforePage`: the cursor's own commit, before its page is applied.
            try ledgerStep { try ledger.commitCursor(to: seq) }
            guard try commit() else { throw LedgerFailure(message: "the cursor's commit failed") }
        case .dropQueue(let reason):
            let keys = try ledgerStep { try ledger.dropQueue() }
            if !keys.isEmpty {
                let line = DeviceInstance.queueLost(keys, reason: reason)
                io.emit(line.type, line.fields)
            }
        case .endPass(let record):
            try ledgerStep { try ledger.endPass(record) }
        case .recordAppOpen(let at, let dataAge):
            try ledgerStep { try ledger.recordAppOpen(at: at, dataAge: dataAge) }
        case .recordGuarantee(let line):
            try ledgerStep { try ledger.recordGuarantee(line) }
        case .answerSync(let tokens):
            for token in tokens {
                guard let waiter = syncWaiters.removeValue(forKey: token) else { continue }
                switch waiter {
                case .control(let peer, let req):
                    try reply(to: peer, .controlAck(ControlAck(req: req, ok: true, detail: "pass ended",
                                                               data: statusData())))
                case .pool(let done):
                    _ = try commit()
                    done(statusData())
                }
            }
        case .log(let line):
            io.emit(line.type, line.fields)
        case .event(let event):
            io.emit(event)
        case .awaitPass(let token, let pending):
            nextToken = max(nextToken, token + 1)
            syncWaiters[token] = .control(peer: pending.peer, req: pending.request.req)
        case .answerControl(let peer, let message):
            try reply(to: peer, message)
        case .answerWithStatus(let pending, let detail):
            try perform(instance.onControlDone(pending, .ack(detail, statusData())))
        case .reinstall(let pending):
            let answer: [DeviceDirective]
            do {
                answer = instance.onReinstalled(lost: try reinstall(), answering: pending)
            } catch {
                answer = instance.onControlDone(pending, .refused("\(error)"))
            }
            try perform(answer)
        case .armCrash(let args, let pending):
            let answer: ControlAnswer
            do {
                answer = .ack(try mortality.crashPoints.control(args, role: "device"), nil)
            } catch {
                answer = .refused("\(error)")
            }
            try perform(instance.onControlDone(pending, answer))
        case .stop:
            stopping = true
        }
    }

    /// Counts one occurrence of `point`; dies there when it is the armed one, after committing the step's ledger
    /// writes so far (what a kill between this write and the next send would find on disk).
    func reach(_ point: CrashPoint, work: Int = 1) throws {
        guard let nth = mortality.fires(point, work: work) else { return }
        _ = commitLedger()
        io.die(at: point, nth: nth, work: work)
        syncWaiters.removeAll()
        try mortality.die()
    }

    /// Asks the machine whether the process dies right after `kind`; if so, what is not committed is lost.
    func boundary(_ kind: DeviceBoundary) throws {
        guard io.dies(after: kind) else { return }
        if ledger.database.inGroup { try? ledger.database.rollbackGroup() }
        syncWaiters.removeAll()
        try mortality.die()
    }

    /// `ownWrites: untilPulled`: what the last rebuilds left out of the replica, one event per draft (the switch's
    /// mark on the timeline; read-your-writes judges what the user then saw).
    func emitHiddenOwnWrites() {
        guard !ledger.hiddenOwnWrites.isEmpty else { return }
        let cursor = (try? ledger.cursor()) ?? 0
        let byDraft = Dictionary(grouping: ledger.hiddenOwnWrites, by: \.draft)
        for (draft, hidden) in byDraft.sorted(by: { $0.key < $1.key }) {
            io.emit(.replicaOwnWriteHidden, [
                ("draft", .string(draft)), ("keys", .array(hidden.map { .string($0.key) })), ("cursor", .int(cursor)),
                ("reason", "ownWrites untilPulled: the replica replays only unsettled ops, and these are acknowledged"),
            ])
        }
        ledger.hiddenOwnWrites.removeAll()
    }

    func ledgerStep<T>(_ body: () throws -> T) throws -> T {
        do {
            if driveDepth > 0 && !ledger.database.inGroup { try ledger.database.beginGroup() }
            return try body()
        } catch {
            throw LedgerFailure(message: "\(error)")
        }
    }

    /// Commits the ledger writes of the step under way; false when the commit failed: they are rolled back, the
    /// instance is told as for any ledger failure, and the caller must not send what depended on them.
    @discardableResult
    func commitLedger() -> Bool {
        guard !killed, ledger.database.inGroup else { return !killed }
        do {
            try ledger.database.commitGroup()
            return true
        } catch {
            let message = "commit failed: \(error)"
            io.emit(.ledgerError, [("message", .string(message))])
            guard !recoveringCommit else { return false }
            recoveringCommit = true
            defer { recoveringCommit = false }
            recover(from: message)
            _ = try? ledger.database.commitGroup()
            return false
        }
    }

    /// `commitLedger`, then a crash-anywhere boundary when something was committed.
    func commit() throws -> Bool {
        let pending = ledger.database.inGroup
        guard commitLedger() else { return false }
        if pending { try boundary(.commit) }
        return true
    }

    func send(_ message: Message, to peer: DevicePeer) throws {
        guard try commit() else {
            io.emit(.sendFailed, [("to", .string(peer.rawValue)), ("type", .string(message.type)),
                                    ("reason", "the ledger could not commit what it depends on")])
            return
        }
        io.flushEvents()
        if let reason = io.transmit(message, to: peer) {
            // Queue full or no peer: the request's reply timeout turns this into an unknown outcome.
            io.emit(.sendFailed, [("to", .string(peer.rawValue)), ("type", .string(message.type)),
                                    ("reason", .string(reason))])
            return
        }
        if case .push = message, peer == .server { try reach(.deviceAfterSendBeforeReply) }
        try boundary(.send)
    }

    func reply(to peer: [UInt8], _ message: Message) throws {
        guard try commit() else { return }
        io.flushEvents()
        io.answerControl(message, to: peer)
        try boundary(.reply)
    }
}
