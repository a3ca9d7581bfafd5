import Foundation
import LabKit
import SQLite
import SyncProtocol
import ZeroMQ

/// The server's IO: the device and control ROUTERs, the notice socket, the database, the event log and a small
/// queue of delayed replies. One thread (the caller of `run`) owns all of them; it polls, hands each message to the
/// `ServerInstance`, and carries out the directives it returns, in order.
public final class ServerShell {
    public let configuration: ServerConfiguration
    let events: EventLog
    let store: ServerStore
    var instance: ServerInstance
    let context: Context
    let devices: Socket
    let control: Socket?
    let notices: Socket?
    /// Replies held back by the fault plan, soonest first.
    var delayed: [(due: UInt64, frames: [[UInt8]])] = []
    var stopping = false
    /// Where this process kills itself (`--crash-at`, control `crashAt`).
    var crashPoints = CrashPoints()
    /// CURVE: the context's ZAP handler (admits the accounts file's keys on `devices`, the launcher's on `control`)
    /// and the monitor that ends a connection's session when it closes. nil under NULL.
    let zap: ZapHandler?
    let monitor: ConnectionMonitor?
    /// Bounds the `request.refused` lines a flood can write (per peer and in all).
    var refusals = RefusalLimiter()
    /// The last refusal was held back, so the `hello.refused` that follows it is too.
    var refusalSuppressed = false

    /// Largest message the ROUTERs take. Well above `Limits.maxBodyBytes`, so a body of 1–4 MiB reaches the codec
    /// and is answered `tooLarge`; beyond it libzmq drops the connection, which no one can answer.
    static let maxMessageBytes: Int64 = 4 << 20
    /// Longest poll, so SIGTERM is seen promptly even if it lands just before the poll starts.
    static let maxPollMs = 200
    /// Messages handled from one socket before looking at the others.
    static let drainBatch = 256
    /// Replies queued for one connection before more are dropped (`reply.lost`): with pages under
    /// `Limits.maxBodyBytes` (1 MiB), a client that never reads pins at most this many MiB of replies
    /// (devices have one request in flight, a push or a pull, so a legitimate one never comes near it).
    static let replyHighWaterMark: Int32 = 8

    /// Opens the event log and the database, loads the accounts file, binds and connects the sockets.
    /// Every failure names the flag or file at fault.
    public init(_ configuration: ServerConfiguration) throws(ServerError) {
        self.configuration = configuration
        // Before anything slow: a SIGTERM during start-up is then a clean stop, not a kill.
        Signals.install()
        let clock = SimClock(epochMicros: configuration.epochMicros ?? SimClock.wallMicros(),
                             scale: configuration.timeScale)
        do {
            events = try EventLog(path: configuration.eventsPath, process: configuration.name, clock: clock)
        } catch {
            throw .startup("cannot open --events: \(error)")
        }
        do {
            store = try ServerStore(path: configuration.databasePath, synchronous: configuration.synchronous)
        } catch {
            throw .startup("cannot open --db \(configuration.databasePath): \(error)")
        }
        if let path = configuration.accountsPath {
            let file: AccountsFile
            do {
                file = try AccountsFile.load(path: path)
            } catch {
                throw ServerError(error)
            }
            do {
                try store.load(file)
            } catch {
                throw .startup("cannot load --accounts \(path) into --db \(configuration.databasePath): \(error)")
            }
        }
        for item in configuration.crashAt { crashPoints.arm(item.point, nth: item.nth) }
        instance = ServerInstance(devices: try store.devices(), heads: try store.heads(),
                                  faults: configuration.faults, seed: configuration.seed,
                                  switches: configuration.switches)
        var keys: (own: CurveKeyPair, launcher: String?, broker: String?)?
        if let keyFile = configuration.keyFile {
            do {
                keys = (try CurveKeyPair.read(secretFile: keyFile),
                        try configuration.launcherKeyFile.map { path throws(CurveKeyError) in
                            try CurveKeyPair.read(publicFile: path)
                        },
                        try configuration.brokerKeyFile.map { path throws(CurveKeyError) in
                            try CurveKeyPair.read(publicFile: path)
                        })
            } catch {
                throw .startup("cannot use a key file: \(error)")
            }
        }
        do {
            let context = try Context()
            self.context = context
            if let keys {
                // Before any CURVE socket binds: without a handler libzmq would admit every key.
                var deviceKeys: [String: String] = [:]
                if let path = configuration.accountsPath {
                    deviceKeys = try AccountsFile.load(path: path).devicesByPublicKey
                }
                zap = try ZapHandler(context, policy: [
                    "devices": deviceKeys, "control": keys.launcher.map { [$0: "launcher"] } ?? [:],
                ])
            } else {
                zap = nil
            }
            devices = try Self.router(context, bind: configuration.listen, flag: "listen", curve: keys?.own,
                                      domain: "devices", sendHighWaterMark: Self.replyHighWaterMark)
            monitor = keys == nil ? nil : try ConnectionMonitor(context, watching: devices)
            control = try configuration.control.map {
                try Self.router(context, bind: $0, flag: "control", curve: keys?.own, domain: "control")
            }
            notices = try configuration.notify.map {
                try Self.noticeSocket(context, connect: $0, mode: configuration.notifyMode,
                                      highWaterMark: configuration.notifyHighWaterMark,
                                      curve: keys.map { ($0.own, $0.broker!) })
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw .startup("cannot set up sockets: \(error)")
        }
    }

    private static func noticeSocket(_ context: Context, connect endpoint: String,
                                     mode: ServerConfiguration.NotifyMode, highWaterMark: Int,
                                     curve: (CurveKeyPair, String)?) throws -> Socket
    {
        // A short linger lets notices queued at a clean stop reach the broker.
        let socket = try Socket(context, mode == .push ? .push : .pub, lingerMs: 200)
        try socket.setSendHighWaterMark(Int32(highWaterMark))
        if let (own, broker) = curve { try socket.setCurveClient(own, serverKey: broker) }
        do {
            try socket.connect(endpoint)
        } catch {
            throw ServerError.startup("cannot connect --notify \(endpoint): \(error)")
        }
        return socket
    }

    /// Options are set before the bind: libzmq copies them into the listener, so connections accepted later get
    /// them (an option set after the bind would not apply to them).
    private static func router(_ context: Context, bind endpoint: String, flag: String, curve: CurveKeyPair?,
                               domain: String, sendHighWaterMark: Int32? = nil) throws -> Socket
    {
        let socket = try Socket(context, .router)
        if let sendHighWaterMark { try socket.setSendHighWaterMark(sendHighWaterMark) }
        if let curve { try socket.setCurveServer(curve, domain: domain) }
        try socket.setMaxMessageSize(maxMessageBytes)
        // An unroutable reply (the peer went away) fails instead of vanishing, so it can be logged.
        try socket.setRouterMandatory(true)
        do {
            try socket.bind(endpoint)
        } catch {
            throw ServerError.startup("cannot bind --\(flag) \(endpoint): \(error)")
        }
        return socket
    }

    /// The endpoint the device socket is bound to (with the port chosen for `tcp://…:*`).
    public var listenEndpoint: String { devices.lastEndpoint }

    /// Serves until SIGTERM, SIGINT or the control command `stop`; then sends what is queued, closes the sockets
    /// and writes `process.stopped`. Throws only when a socket fails while serving.
    public func run() throws(ServerError) {
        var started: [(String, JSONValue)] = [
            ("role", "server"), ("pid", .int(Int(getpid()))), ("listen", .string(listenEndpoint)),
            ("db", .string(configuration.databasePath)),
        ]
        if let control { started.append(("control", .string(control.lastEndpoint))) }
        if configuration.switches != .correct { started += configuration.switches.fields }
        if let notify = configuration.notify {
            started.append(("notify", .string(notify)))
            started.append(("notifyMode", .string(configuration.notifyMode.rawValue)))
        }
        events.emit("process.started", started)
        defer { close() }
        var poller = Poller([devices] + (control.map { [$0] } ?? []))
        let zapIndex = zap.map { poller.add($0.socket); return poller.sockets.count - 1 } ?? -1
        let monitorIndex = monitor.map { poller.add($0.socket); return poller.sockets.count - 1 } ?? -1
        while !stopping && !Signals.stopRequested {
            let ready: [Int]
            do {
                ready = try poller.poll(timeoutMs: pollTimeout())
            } catch let error as ZMQError where error.isTerminated {
                break
            } catch {
                throw .io("poll: \(error)")
            }
            // Ended connections first, so their sessions are gone before a new connection's messages are read.
            if ready.contains(monitorIndex), let monitor {
                do {
                    for connection in try monitor.ended() { instance.onConnectionEnded(connection) }
                } catch {
                    throw .io("monitor: \(error)")
                }
            }
            if ready.contains(zapIndex), let zap { serveZap(zap) }
            if ready.contains(0) { try drainDevices() }
            if ready.contains(1), let control { try drain(control) { handleControl($0) } }
            sendDueReplies(now: SimClock.monotonicNanos())
        }
    }

    /// Answers the ZAP handler's requests; a refused key is a rate-limited `request.refused` (code `badKey`).
    private func serveZap(_ zap: ZapHandler) {
        guard let decisions = try? zap.serve() else { return }
        for decision in decisions where decision.userID == nil {
            let peer = "\(decision.domain)@\(decision.address)"
            let key = decision.publicKey.isEmpty ? "none" : decision.publicKey
            logRefusal(ServerEvent("request.refused", [
                ("code", "badKey"), ("message", .string("\(decision.mechanism) key \(key) is not admitted")),
                ("peer", .string(peer)),
            ]))
        }
    }

    private func drainDevices() throws(ServerError) {
        for _ in 0..<Self.drainBatch {
            guard !stopping && !Signals.stopRequested else { return }
            let received: Received?
            do {
                received = try devices.receiveWithSender(dontWait: true)
            } catch {
                throw .io("receive: \(error)")
            }
            guard let received else { return }
            guard let (peer, payload) = Peer.split(received.frames, user: received.userID,
                                                   connection: zap == nil ? -1 : received.connection)
            else { continue }
            perform(instance.onDeviceMessage(from: peer, frames: payload))
        }
    }

    /// Writes a refusal unless this peer (or everyone) refused too many this second; what is held back is counted
    /// and reported with the next line that is written for that peer.
    private func logRefusal(_ event: ServerEvent) {
        let peer = event.fields.first(where: { $0.0 == "peer" })?.1.stringValue ?? ""
        let (write, suppressed) = refusals.admit(peer: peer, nanos: SimClock.monotonicNanos())
        refusalSuppressed = !write
        guard write else { return }
        events.emit(event.type, suppressed > 0 ? event.fields + [("suppressed", .int(suppressed))] : event.fields)
    }

    private func close() {
        // A stop does not wait out the fault plan's delays: the replies are ready, so they go now.
        for reply in delayed { sendDevice(reply.frames) }
        delayed.removeAll()
        devices.close()
        // The answer to `stop` (queued just before) goes out before the socket closes.
        try? control?.setLinger(ms: 500)
        control?.close()
        notices?.close()
        zap?.close()
        monitor?.close()
        events.emit("process.stopped", [("role", "server"), ("pid", .int(Int(getpid()))),
                                        ("refusalsSuppressed", .int(refusals.suppressedTotal))])
        // Waits (at most each socket's linger) for what is queued, the `stop` ack and last notices among it.
        context.terminate()
    }

    private func drain(_ socket: Socket, _ handle: ([[UInt8]]) -> Void) throws(ServerError) {
        for _ in 0..<Self.drainBatch {
            // Between messages, not within one: a stop lets the current message finish (and commit).
            guard !stopping && !Signals.stopRequested else { return }
            let frames: [[UInt8]]?
            do {
                frames = try socket.receive(dontWait: true)
            } catch {
                throw .io("receive: \(error)")
            }
            guard let frames else { return }
            handle(frames)
        }
    }

    private func handleDevice(_ frames: [[UInt8]]) {
        guard let (peer, payload) = Peer.split(frames) else { return }
        perform(instance.onDeviceMessage(from: peer, frames: payload))
    }

    private func handleControl(_ frames: [[UInt8]]) {
        guard let (peer, payload) = Peer.split(frames) else { return }
        // `crashAt` arms this shell's crash points: the kill is IO, so the shell answers it, not the instance.
        if case .success(.control(let control)) = Codec.decodeOrReply(payload), control.command == "crashAt" {
            let ack: ControlAck
            do {
                let detail = try crashPoints.control(control.args, role: "server")
                events.emit("crash.armed", [("detail", .string(detail))])
                ack = ControlAck(req: control.req, ok: true, detail: detail)
            } catch {
                ack = ControlAck(req: control.req, ok: false, detail: "\(error)")
            }
            if let socket = self.control {
                events.flush()
                send(peer.envelope(Codec.encode(.controlAck(ack))), on: socket)
            }
            return
        }
        perform(instance.onControlMessage(from: peer, frames: payload))
    }

    /// Counts one occurrence of `point`; dies there when it is the armed one.
    func reach(_ point: CrashPoint) {
        if let nth = crashPoints.reach(point) { CrashPoints.die(at: point, nth: nth, events: events) }
    }

    // MARK: - Directives

    func perform(_ directives: [ServerDirective]) {
        // The events of one request (up to a whole push of ops) go out in one write, flushed before every send.
        events.hold()
        defer { events.release() }
        for directive in directives {
            switch directive {
            case .reply(let peer, let message, let delayMs):
                events.flush()
                let frames = peer.envelope(Codec.encode(message))
                if delayMs > 0 {
                    schedule(frames, due: SimClock.monotonicNanos() + UInt64(delayMs) * 1_000_000)
                } else {
                    sendDevice(frames)
                }
                if case .pushResult = message { reach(.serverAfterReply) }
            case .controlReply(let peer, let message):
                guard let control else { continue }
                events.flush()
                send(peer.envelope(Codec.encode(message)), on: control)
            case .apply(let request):
                // The design switches `noticeBeforeCommit` / `replyBeforeCommit` send from inside the transaction.
                let switches = instance.switches.effective(for: request.account)
                let early: (([AppliedOp]) -> Void)? = switches.sendsBeforeCommit
                    ? { [self] outcomes in perform(instance.onDecided(request, outcomes: outcomes)) } : nil
                var decided: [AppliedOp] = []
                do {
                    let outcomes = try store.apply(device: request.device, account: request.account, ops: request.ops,
                                                   injectRejections: request.injectRejections,
                                                   idempotency: request.idempotency, failCommit: request.failCommit,
                                                   beforeCommit: early, decided: { decided = $0 })
                    reach(.serverAfterCommitBeforeReply)
                    perform(instance.onApplied(request, outcomes: outcomes))
                } catch {
                    perform(instance.onApplyFailed(request, error: error, decided: decided))
                }
            case .pull(let request):
                do {
                    let page = try store.pull(account: request.account, cursor: request.cursor, limit: request.limit)
                    perform(instance.onPulled(request, page: page))
                } catch {
                    perform(instance.onPullFailed(request, error: error))
                }
            case .notify(let notice):
                guard let notices else { continue }
                events.flush()
                let sent = (try? notices.send(Codec.encode(.notice(notice)), dontWait: true)) ?? false
                if sent { reach(.serverAfterNotice) }
                perform(instance.onNotice(notice, sent: sent))
            case .addDevice(let record, let ticket):
                do {
                    try store.addDevice(record)
                    if let zap {
                        // A new key replaces the device's old one: connections with the old key are refused.
                        zap.policy["devices"] = zap.policy["devices", default: [:]].filter { $0.value != record.id }
                        if let key = record.publicKey { zap.policy["devices"]?[key] = record.id }
                    }
                    perform(instance.onDeviceAdded(record, ticket: ticket))
                } catch {
                    perform(instance.onDeviceAddFailed(error, ticket: ticket))
                }
            case .log(let event):
                if event.type == "request.refused" {
                    logRefusal(event)
                } else if event.type == "hello.refused" {
                    if !refusalSuppressed { events.emit(event.type, event.fields) }
                } else {
                    events.emit(event.type, event.fields)
                }
            case .stop:
                stopping = true
            }
        }
    }

    private func sendDevice(_ frames: [[UInt8]]) { send(frames, on: devices) }

    /// Sends without blocking: a client that stopped reading, or went away, loses its reply rather than stall
    /// everyone else. A lost reply is logged; the device resends with the same key.
    private func send(_ frames: [[UInt8]], on socket: Socket) {
        var failure = "the peer is gone or not reading"
        do {
            if try socket.send(frames, dontWait: true) { return }
        } catch {
            failure = "\(error)"
        }
        let type = frames.count >= 2 ? String(decoding: frames[frames.count - 2], as: UTF8.self) : ""
        let peer = Peer(routingID: frames.first ?? []).label
        // Rate-limited per peer like refusals: a client that floods and never reads cannot grow the log either.
        let (write, suppressed) = refusals.admit(peer: "lost:" + peer, nanos: SimClock.monotonicNanos())
        guard write else { return }
        var fields: [(String, JSONValue)] = [("peer", .string(peer)), ("header", .string(type)),
                                             ("reason", .string(failure))]
        if suppressed > 0 { fields.append(("suppressed", .int(suppressed))) }
        events.emit("reply.lost", fields)
    }

    // MARK: - Delayed replies

    private func schedule(_ frames: [[UInt8]], due: UInt64) {
        let index = delayed.firstIndex(where: { $0.due > due }) ?? delayed.endIndex
        delayed.insert((due, frames), at: index)
    }

    private func sendDueReplies(now: UInt64) {
        var sent = 0
        while sent < delayed.count && delayed[sent].due <= now {
            sendDevice(delayed[sent].frames)
            sent += 1
        }
        if sent > 0 { delayed.removeFirst(sent) }
    }

    private func pollTimeout() -> Int {
        guard let first = delayed.first else { return Self.maxPollMs }
        let now = SimClock.monotonicNanos()
        guard first.due > now else { return 0 }
        return min(Self.maxPollMs, Int((first.due - now + 999_999) / 1_000_000))
    }
}
