import Foundation
import LabKit
import SQLite
import SyncProtocol
import ZeroMQ

/// The device's IO: the ledger, a DEALER to the server, a DEALER to the broker (hints arrive there), the control
/// ROUTER and the timers (the poll timeout). It feeds events to the `DeviceInstance` and carries out the directives
/// it returns, in order. Runs on the thread that calls `run()`; a `DevicePool` drives many shells from one thread
/// through `begin()`, `onFrames(from:)`, `tick()` and `finish()` instead.
public final class DeviceShell {
    public let configuration: DeviceConfiguration
    /// Replaced (file deleted and made again) by a `reinstall`; never nil otherwise.
    var ledger: Ledger!
    let events: EventLog
    let context: Context
    let server: Socket
    let broker: Socket?
    let control: Socket?
    var instance: DeviceInstance
    /// Where control acks go: the device's own ROUTER, or its pool's.
    var replySocket: Socket?
    /// `sync` requests waiting for their pass to end, by token.
    var syncWaiters: [Int: SyncWaiter] = [:]
    var nextToken = 1
    var stopping = false
    /// False in a pool, whose context outlives each device.
    let ownsContext: Bool
    /// How many `drive` calls are under way (they nest through control replies and pool callbacks).
    var driveDepth = 0
    /// Set while the instance is told of a failed commit, so a commit that fails again does not recurse.
    var recoveringCommit = false
    /// Where this process kills itself (`--crash-at`, control `crashAt`); in a pool, the whole pool dies.
    var crashPoints = CrashPoints()
    /// CURVE with a control socket of its own: the context's ZAP handler, which admits only the launcher's key.
    let zap: ZapHandler?

    /// Opens the ledger and the sockets. Throws when the database or an endpoint cannot be used. A pool hands in its
    /// one context, so a thousand devices share one libzmq IO thread instead of starting one each.
    public init(_ configuration: DeviceConfiguration, context shared: Context? = nil) throws {
        self.configuration = configuration
        let clock = configuration.clock
        events = try EventLog(path: configuration.eventsPath, process: configuration.name, clock: clock)
        ledger = try Ledger(path: configuration.databasePath, synchronous: configuration.synchronous)
        let restored = try ledger.prepare(identity: configuration.identity, clock: clock,
                                          settings: configuration.settings, now: clock.now())
        self.context = try shared ?? Context()
        ownsContext = shared == nil
        let keys = try configuration.keys?.load()
        if let keys, configuration.controlEndpoint != nil {
            // Before the control socket binds: without a handler libzmq would admit every key.
            zap = try ZapHandler(context, policy: ["control": keys.launcher.map { [$0: "launcher"] } ?? [:]])
        } else {
            zap = nil
        }
        server = try Socket(context, .dealer)
        try server.setRandomRoutingID()
        try server.setMaxMessageSize(Self.maxMessageBytes)
        try server.setReconnectInterval(ms: 50)
        if let keys { try server.setCurveClient(keys.own, serverKey: keys.server) }
        try server.connect(configuration.serverEndpoint)
        if let endpoint = configuration.brokerEndpoint {
            let socket = try Socket(context, .dealer)
            try socket.setRandomRoutingID()
            try socket.setMaxMessageSize(Self.maxMessageBytes)
            try socket.setReconnectInterval(ms: 50)
            if let keys, let brokerKey = keys.broker { try socket.setCurveClient(keys.own, serverKey: brokerKey) }
            try socket.connect(endpoint)
            broker = socket
        } else {
            broker = nil
        }
        if let endpoint = configuration.controlEndpoint {
            let socket = try Socket(context, .router)
            try socket.setMaxMessageSize(Self.maxMessageBytes)
            if let keys { try socket.setCurveServer(keys.own, domain: "control") }
            try socket.bind(endpoint)
            control = socket
        } else {
            control = nil
        }
        replySocket = control
        for item in configuration.crashAt { crashPoints.arm(item.point, nth: item.nth) }
        instance = DeviceInstance(identity: configuration.identity, settings: configuration.settings,
                                  restored: restored, brokerEnabled: broker != nil,
                                  rng: SeededGenerator.derived(seed: configuration.seed,
                                                               name: configuration.identity.device))
    }

    var now: Double { configuration.clock.now() }

    /// Well above `Limits.maxBodyBytes` (PROTOCOL.md §1): a body of 1–4 MiB reaches the decoder and is answered
    /// `tooLarge`; anything larger is cut off by libzmq before it is buffered.
    static let maxMessageBytes: Int64 = 4 << 20

    /// Serves until `stop`, SIGTERM or SIGINT; then releases what is in flight and returns.
    public func run() throws {
        Signals.install()
        begin()
        var poller = Poller(sockets)
        if let zap { poller.add(zap.socket) }
        while !stopping && !Signals.stopRequested {
            let ready: [Int]
            do {
                ready = try poller.poll(timeoutMs: pollTimeoutMs())
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            for index in ready {
                if let zap, poller.sockets[index] === zap.socket {
                    try zap.serve()
                    continue
                }
                try onFrames(from: poller.sockets[index])
            }
            tick()
        }
        finish()
    }

    /// The sockets to poll: server, broker (when there is one) and control (when it has its own).
    var sockets: [Socket] {
        var sockets: [Socket] = [server]
        if let broker { sockets.append(broker) }
        if let control { sockets.append(control) }
        return sockets
    }

    /// Writes `process.started` and starts the instance.
    func begin() {
        events.emit("process.started", [
            ("role", "device"), ("pid", .int(Int(getpid()))), ("device", .string(configuration.identity.device)),
            ("platform", .string(configuration.identity.platform.rawValue)), ("cursor", .int(instance.cursor)),
        ])
        drive { $0.start(now: now) }
    }

    /// Reads everything waiting on one of this shell's sockets.
    func onFrames(from socket: Socket) throws {
        while !stopping, let frames = try socket.receive(dontWait: true) {
            if socket === server {
                onServerFrames(frames)
            } else if socket === broker {
                onBrokerFrames(frames)
            } else {
                onControlFrames(frames)
            }
        }
    }

    /// Lets the instance act on time passing (timeouts, leases, the platform scheduler).
    func tick() {
        drive { $0.onTick(now: now) }
    }

    /// Releases what is in flight, writes `process.stopped` and closes the sockets.
    func finish() {
        drive { $0.onStop(now: now) }
        events.emit("process.stopped", [("role", "device"), ("pid", .int(Int(getpid())))])
        server.close()
        broker?.close()
        // The answer to `stop` (or anything else queued on control) goes out before the process exits.
        try? control?.setLinger(ms: 500)
        control?.close()
        zap?.close()
        if ownsContext { context.terminate() }
    }

    /// Real ms until the instance next has something to do, bounded so signals are noticed quickly.
    func pollTimeoutMs() -> Int {
        guard let wake = instance.nextWake else { return 100 }
        let realMs = (wake - now) / configuration.clock.scale * 1_000
        guard realMs.isFinite else { return 100 }
        return Int(max(1, min(100, realMs.rounded(.up))))
    }

    // MARK: - Directives

    /// A ledger step failed: the rest of that chain of directives is abandoned.
    struct LedgerFailure: Error {
        let message: String
    }

    /// Runs one instance step and carries out its directives; a ledger failure is handed back to the instance.
    ///
    /// The step's ledger writes form one transaction (each write a savepoint of its own) and its events one write:
    /// both are committed before anything they describe leaves the process (`send`, `reply`) and at the step's end,
    /// so a kill at any moment loses only work whose effect nobody outside has seen, as before, at fewer commits.
    func drive(_ step: (inout DeviceInstance) -> [DeviceDirective]) {
        events.hold()
        driveDepth += 1
        defer {
            driveDepth -= 1
            if driveDepth == 0 { _ = commitLedger() }
            events.release()
        }
        let directives = step(&instance)
        do {
            try perform(directives)
        } catch {
            let message = (error as? LedgerFailure)?.message ?? "\(error)"
            let cursor = (try? ledger.cursor()) ?? instance.cursor
            let recovery = instance.onLedgerFailure(message, cursor: cursor, now: now)
            do { try perform(recovery) } catch { events.emit("ledger.error", [("message", .string("\(error)"))]) }
        }
    }

    func perform(_ directives: [DeviceDirective]) throws {
        for directive in directives {
            switch directive {
            case .sendToServer(let message):
                send(message, on: server, to: "server")
            case .sendToBroker(let message):
                if let broker { send(message, on: broker, to: "broker") }
            case .beginPass(let id, let trigger, let at):
                try ledgerStep { try ledger.beginPass(id: id, trigger: trigger, at: at) }
            case .claim(let request):
                let result = try ledgerStep { try ledger.claim(request) }
                reach(.deviceAfterClaim)
                try perform(instance.onClaimed(result, now: now))
            case .recordOutcomes(let outcomes, _):
                try ledgerStep { try ledger.record(outcomes, wall: SimClock.wallMicros()) }
                reach(.deviceAfterOutcomeRecord)
            case .applyPage(let page):
                // Today the page and its cursor commit in one transaction, so "before the cursor's commit" is here.
                reach(.deviceBeforeCursorCommit)
                let settled = try ledgerStep { try ledger.apply(page, wall: SimClock.wallMicros()) }
                reach(.deviceAfterPageCommit)
                for key in settled {
                    // The pull proved the server applied an op whose reply was lost: it is settled without a resend.
                    events.emit("op.confirmed", [("key", .string(key)), ("via", "pull"), ("pass", .int(page.pass))])
                }
            case .commitCursor(let seq, _):
                // `cursorCommit: beforePage`: the cursor's own commit, before its page is applied.
                try ledgerStep { try ledger.commitCursor(to: seq) }
                guard commitLedger() else { throw LedgerFailure(message: "the cursor's commit failed") }
            case .dropQueue(let reason):
                let keys = try ledgerStep { try ledger.dropQueue() }
                if !keys.isEmpty {
                    let line = DeviceInstance.queueLost(keys, reason: reason)
                    events.emit(line.type, line.fields)
                }
            case .endPass(let record):
                try ledgerStep { try ledger.endPass(record) }
            case .recordAppOpen(let at, let dataAge):
                try ledgerStep { try ledger.recordAppOpen(at: at, dataAge: dataAge) }
            case .answerSync(let tokens):
                for token in tokens {
                    guard let waiter = syncWaiters.removeValue(forKey: token) else { continue }
                    switch waiter {
                    case .control(let peer, let req):
                        reply(to: peer, .controlAck(ControlAck(req: req, ok: true, detail: "pass ended",
                                                               data: statusData())))
                    case .pool(let done):
                        _ = commitLedger()
                        done(statusData())
                    }
                }
            case .log(let line):
                events.emit(line.type, line.fields)
                if line.type == "guarantee" { try? ledger.recordGuarantee(line) }
            }
        }
    }

    /// Counts one occurrence of `point`; dies there when it is the armed one, after committing the step's ledger
    /// writes so far (what a kill between this write and the next send would find on disk).
    func reach(_ point: CrashPoint) {
        guard let nth = crashPoints.reach(point) else { return }
        _ = commitLedger()
        CrashPoints.die(at: point, nth: nth, events: events)
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
    func commitLedger() -> Bool {
        guard ledger.database.inGroup else { return true }
        do {
            try ledger.database.commitGroup()
            return true
        } catch {
            let message = "commit failed: \(error)"
            events.emit("ledger.error", [("message", .string(message))])
            guard !recoveringCommit else { return false }
            recoveringCommit = true
            defer { recoveringCommit = false }
            let cursor = (try? ledger.cursor()) ?? instance.cursor
            let recovery = instance.onLedgerFailure(message, cursor: cursor, now: now)
            do { try perform(recovery) } catch { events.emit("ledger.error", [("message", .string("\(error)"))]) }
            _ = try? ledger.database.commitGroup()
            return false
        }
    }

    func send(_ message: Message, on socket: Socket, to peer: String) {
        guard commitLedger() else {
            events.emit("send.failed", [("to", .string(peer)), ("type", .string(message.type)),
                                        ("reason", "the ledger could not commit what it depends on")])
            return
        }
        events.flush()
        do {
            if try !socket.send(Codec.encode(message), dontWait: true) {
                // Queue full or no peer: the request's reply timeout turns this into an unknown outcome.
                events.emit("send.failed", [("to", .string(peer)), ("type", .string(message.type)),
                                            ("reason", "would block")])
            } else if case .push = message, socket === server {
                reach(.deviceAfterSendBeforeReply)
            }
        } catch {
            events.emit("send.failed", [("to", .string(peer)), ("type", .string(message.type)),
                                        ("reason", .string("\(error)"))])
        }
    }

    // MARK: - Server and broker

    func onServerFrames(_ frames: [[UInt8]]) {
        switch Codec.decodeOrReply(frames) {
        case .success(let message): drive { $0.onServerMessage(message, now: now) }
        case .failure(let error): drive { $0.onServerGarbage(error, now: now) }
        }
    }

    func onBrokerFrames(_ frames: [[UInt8]]) {
        let keys = Self.bodyKeys(frames)
        switch Codec.decodeOrReply(frames) {
        case .success(let message): drive { $0.onBrokerMessage(message, keys: keys, now: now) }
        case .failure(let error): drive { $0.onBrokerGarbage(error, keys: keys, now: now) }
        }
    }

    /// The JSON keys of a message's raw body frame, sorted, read before strict decoding: the launcher checks that a
    /// hint carried nothing but references, so the event lists what was on the wire, not what the decoder kept.
    public static func bodyKeys(_ frames: [[UInt8]]) -> [String] {
        guard frames.count >= 2, let keys = WireKeys.topLevel(frames[1]) else { return [] }
        return keys.sorted()
    }

    func reply(to peer: [UInt8], _ message: Message) {
        guard let replySocket, commitLedger() else { return }
        events.flush()
        _ = try? replySocket.send([peer] + Codec.encode(message), dontWait: true)
    }
}
