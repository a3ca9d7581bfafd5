import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// The broker's IO: binds the notices, device and control sockets, feeds what arrives and the clock's ticks to a
/// `BrokerInstance`, and carries out its directives in order. Runs on the calling thread (the process's main thread):
/// `zmq_poll` blocks, so it never runs on the cooperative pool.
public final class BrokerShell {
    public let configuration: BrokerConfiguration
    private var instance: BrokerInstance
    private let clock: SimClock
    private let events: EventLog
    private let context: Context
    private let notices: Socket
    private let devices: Socket
    private let control: Socket?
    /// The earliest simulated second the instance asked to be ticked at.
    private var wakeAt: Double?
    private var stopping = false
    /// Events were emitted that the next send may make visible: flush them before it.
    private var flushBeforeSend = false
    /// The outcome of one send, reused for every send.
    private var sendOutcome: [BrokerDirective] = []
    /// The header frame of every hint.
    private let hintHeader = Codec.encode(.hint(Hint(hint: "h-0", account: "a", head: 0)))[0]
    /// The body frame of the hint being sent, rewritten for every hint in the same memory.
    private var hintBody: [UInt8] = []
    /// Where this process kills itself (`--crash-at`, control `crashAt`).
    private var crashPoints = CrashPoints()
    /// CURVE: the ZAP handler (devices: the accounts file's keys; control: the launcher's; notices: the server's) and
    /// the monitor that ends a registration's binding when its connection closes. nil under NULL.
    private let zap: ZapHandler?
    private let monitor: ConnectionMonitor?
    /// Bounds the `request.refused` lines a flood can write.
    private var refusals = RefusalLimiter()

    /// Messages read from one socket before looking at the others, so a flood of notices cannot starve control.
    static let batch = 256
    /// The longest poll: how soon a SIGTERM is noticed when nothing else happens.
    static let maxPollMs = 100
    /// Largest inbound message libzmq accepts on the device and control sockets; up to it, an oversized body is
    /// answered with a `tooLarge` error; past it libzmq closes the connection before we see anything.
    static let maxMessageBytes: Int64 = 4 << 20

    /// Opens the event log and binds every socket; throws when an endpoint cannot be bound.
    public init(configuration: BrokerConfiguration, directory: AccountDirectory) throws {
        self.configuration = configuration
        self.clock = configuration.epochMicros.map { SimClock(epochMicros: $0, scale: configuration.timeScale) }
            ?? SimClock.startingNow(scale: configuration.timeScale)
        self.events = try EventLog(path: configuration.events, process: configuration.name, clock: clock)
        for item in configuration.crashAt { crashPoints.arm(item.point, nth: item.nth) }
        self.instance = BrokerInstance(directory: directory, profiles: configuration.profiles,
                                       chaos: configuration.chaos, reorderWindowSec: configuration.reorderWindowSec,
                                       seed: configuration.seed)
        instance.hintCarriesData = configuration.hintCarriesData
        instance.hintDataAccounts = configuration.hintDataAccounts
        context = try Context()
        var own: CurveKeyPair?
        if let keyFile = configuration.keyFile {
            let pair = try CurveKeyPair.read(secretFile: keyFile)
            own = pair
            let launcher = try configuration.launcherKeyFile.map { path throws(CurveKeyError) in
                try CurveKeyPair.read(publicFile: path)
            }
            let server = try CurveKeyPair.read(publicFile: configuration.serverKeyFile ?? "")
            // Before any CURVE socket binds: without a handler libzmq would admit every key.
            zap = try ZapHandler(context, policy: [
                "devices": try AccountsFile.load(path: configuration.accountsPath).devicesByPublicKey,
                "control": launcher.map { [$0: "launcher"] } ?? [:],
                "notices": [server: "server"],
            ])
        } else {
            zap = nil
        }
        notices = try Socket(context, configuration.noticesMode == .sub ? .sub : .pull)
        try notices.setReceiveHighWaterMark(configuration.noticesHWM)
        if configuration.noticesMode == .sub { try notices.subscribe() }
        if let own { try notices.setCurveServer(own, domain: "notices") }
        try notices.bind(configuration.notices)
        devices = try Socket(context, .router)
        try devices.setRouterMandatory(true)
        // No ZMQ_ROUTER_HANDOVER: a connection that presents a connected device's routing id is refused by libzmq
        // instead of taking over its pipe (devices use libzmq's own routing ids and register again on reconnect).
        try devices.setSendHighWaterMark(configuration.hintHWM)
        try devices.setMaxMessageSize(Self.maxMessageBytes)
        if let own { try devices.setCurveServer(own, domain: "devices") }
        try devices.bind(configuration.listen)
        monitor = own == nil ? nil : try ConnectionMonitor(context, watching: devices)
        if let endpoint = configuration.control {
            // A linger, so the acknowledgement of `stop` still leaves after the socket closes: with linger 0 it is
            // dropped whenever libzmq's IO thread has not written it yet, which a loaded machine makes likely.
            let socket = try Socket(context, .router, lingerMs: 500)
            try socket.setMaxMessageSize(Self.maxMessageBytes)
            if let own { try socket.setCurveServer(own, domain: "control") }
            try socket.bind(endpoint)
            control = socket
        } else {
            control = nil
        }
    }

    /// Serves until SIGTERM, SIGINT or the control command `stop`, then writes `process.stopped`.
    public func run() throws {
        Signals.install()
        let profiles = configuration.profiles
        events.emit("process.started", [
            ("role", "broker"), ("pid", .int(Int(getpid()))), ("listen", .string(devices.lastEndpoint)),
            ("notices", .string(notices.lastEndpoint)), ("noticesMode", .string(configuration.noticesMode.rawValue)),
            ("control", control.map { .string($0.lastEndpoint) } ?? .null),
            ("seed", .string(String(configuration.seed))),
            ("timeScale", .double(configuration.timeScale)),
            ("profiles", .object([
                ("android", .string(profiles.android.rawValue)), ("ios", .string(profiles.ios.rawValue)),
                ("web", .string(profiles.web.rawValue)),
            ])),
        ])
        if !configuration.chaos.isOff {
            events.emit("fault.set", [("scope", "global"), ("source", "flags")] + configuration.chaos.fields)
        }
        var poller = Poller([notices, devices] + (control.map { [$0] } ?? []))
        if let zap { poller.add(zap.socket) }
        if let monitor { poller.add(monitor.socket) }
        while !stopping && !Signals.stopRequested {
            let now = clock.now()
            if let wake = wakeAt, wake <= now {
                wakeAt = nil
                carryOut(instance.onTick(now: now))
                continue
            }
            let ready: [Int]
            do {
                ready = try poller.poll(timeoutMs: pollTimeout(now: now))
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            // Ended connections first, so a registration's binding is gone before a new connection is read.
            if let monitor, ready.contains(where: { poller.sockets[$0] === monitor.socket }) {
                for connection in try monitor.ended() { instance.onConnectionEnded(connection) }
            }
            for index in ready {
                let socket = poller.sockets[index]
                if let zap, socket === zap.socket {
                    serveZap(zap)
                } else if socket !== monitor?.socket {
                    try drain(socket)
                }
            }
        }
        zap?.close()
        monitor?.close()
        events.emit("process.stopped", [
            ("role", "broker"), ("pid", .int(Int(getpid()))), ("hints", .object(instance.counters.fields)),
            ("refusalsSuppressed", .int(refusals.suppressedTotal)),
        ])
        notices.close()
        devices.close()
        // The answer to `stop` (queued just before) goes out before the socket closes.
        try? control?.setLinger(ms: 500)
        control?.close()
        // Waits (at most each socket's linger) for what is queued, the `stop` ack among it, before the exit.
        context.terminate()
    }

    private func pollTimeout(now: Double) -> Int {
        guard let wake = wakeAt else { return Self.maxPollMs }
        let ms = (clock.realSeconds(wake - now) * 1000).rounded(.up)
        return Int(min(max(ms, 0), Double(Self.maxPollMs)))
    }

    /// Reads up to `batch` messages. Their events are held and written with one `write(2)` before each send that
    /// they may precede (a notice's accepted hints go out together), and the rest when the batch ends.
    private func drain(_ socket: Socket) throws {
        events.hold()
        defer {
            events.release()
            flushBeforeSend = false
        }
        for _ in 0..<Self.batch {
            guard let received = try socket.receiveWithSender(dontWait: true) else { return }
            let frames = received.frames
            let now = clock.now()
            if socket === notices {
                carryOut(instance.onNoticeMessage(frames, now: now))
            } else if socket === devices {
                carryOut(instance.onDeviceMessage(Array(frames.dropFirst()), peer: frames[0], now: now,
                                                  user: received.userID,
                                                  connection: zap == nil ? -1 : received.connection))
            } else if !armCrash(Array(frames.dropFirst()), peer: frames[0]) {
                carryOut(instance.onControlMessage(Array(frames.dropFirst()), peer: frames[0], now: now))
            }
            if stopping { return }
        }
    }

    /// Interprets directives in order; a send's outcome goes back to the instance before the next directive.
    /// `outcome`: these report a send that already happened, so their events need not reach the file before the next
    /// send (it is not their effect); the end of the batch or the next flush writes them.
    private func carryOut(_ directives: [BrokerDirective], outcome: Bool = false) {
        for directive in directives {
            switch directive {
            case let .deliver(device, peer, hint, copy):
                flushIfNeeded()
                Codec.writeBody(of: .hint(hint), into: &hintBody)
                if let data = instance.hintData[hint.hint] {
                    // `hintCarriesData`: the body's last `}` becomes `,"changes":[…]}`.
                    hintBody.removeLast()
                    hintBody += Array(",\"changes\":\(data.description)}".utf8)
                }
                let failure = sendHint(to: peer)
                sendOutcome.removeAll(keepingCapacity: true)
                instance.onSent(device: device, hint: hint, copy: copy, failure: failure, now: clock.now(),
                                into: &sendOutcome)
                carryOut(sendOutcome, outcome: true)
                if failure == nil { reach(.brokerAfterDeliver) }
            case let .reply(socket, peer, message):
                let target: Socket? = socket == .devices ? devices : control
                if let target {
                    flushIfNeeded()
                    // A peer that left before its answer is nobody's loss: its request changed nothing or is logged.
                    _ = send([peer] + Codec.encode(message), on: target)
                }
            case let .scheduleTick(at):
                wakeAt = min(wakeAt ?? at, at)
            case let .log(line):
                let (type, fields) = (line.type, line.fields)
                if type == "request.refused" {
                    let peer = fields.first(where: { $0.0 == "peer" })?.1.stringValue ?? ""
                    let (write, suppressed) = refusals.admit(peer: peer, nanos: SimClock.monotonicNanos())
                    guard write else { continue }
                    events.emit(type, suppressed > 0 ? fields + [("suppressed", .int(suppressed))] : fields)
                } else {
                    events.emit(type, fields)
                }
                if !outcome { flushBeforeSend = true }
            case let .hintAccepted(hint, device, origin, seqs, resync):
                events.emit("hint.accepted") { line in
                    line.add("hint", hint.hint)
                    line.add("device", device)
                    line.add("account", hint.account)
                    line.add("head", hint.head)
                    line.add("origin", origin)
                    line.add("seqs", seqs)
                    if resync { line.add("reason", "resync") }
                }
                if !outcome { flushBeforeSend = true }
                reach(.brokerAfterAcceptBeforeDeliver)
            case let .hintDelivered(hint, device, waitedSec):
                events.emit("hint.delivered") { line in
                    line.add("hint", hint.hint)
                    line.add("device", device)
                    line.add("head", hint.head)
                    line.add("waitedSec", waitedSec)
                }
                if !outcome { flushBeforeSend = true }
            case .stop:
                stopping = true
            }
        }
    }

    /// `crashAt` arms this shell's crash points (the kill is IO: the shell answers it); false for any other message.
    private func armCrash(_ frames: [Frame], peer: [UInt8]) -> Bool {
        guard case .success(.control(let control)) = Codec.decodeOrReply(frames), control.command == "crashAt",
              let socket = self.control
        else { return false }
        let ack: ControlAck
        do {
            let detail = try crashPoints.control(control.args, role: "broker")
            events.emit("crash.armed", [("detail", .string(detail))])
            ack = ControlAck(req: control.req, ok: true, detail: detail)
        } catch {
            ack = ControlAck(req: control.req, ok: false, detail: "\(error)")
        }
        events.flush()
        _ = send([peer] + Codec.encode(.controlAck(ack)), on: socket)
        return true
    }

    /// Counts one occurrence of `point`; dies there when it is the armed one.
    private func reach(_ point: CrashPoint) {
        if let nth = crashPoints.reach(point) { CrashPoints.die(at: point, nth: nth, events: events) }
    }

    /// Answers the ZAP handler; a refused key is a rate-limited `request.refused` (code `badKey`).
    private func serveZap(_ zap: ZapHandler) {
        guard let decisions = try? zap.serve() else { return }
        for decision in decisions where decision.userID == nil {
            let key = decision.publicKey.isEmpty ? "none" : decision.publicKey
            carryOut([.log(EventLine("request.refused", [
                ("code", "badKey"), ("message", .string("\(decision.mechanism) key \(key) is not admitted")),
                ("peer", .string("\(decision.domain)@\(decision.address)")),
            ]))])
        }
    }

    private func flushIfNeeded() {
        guard flushBeforeSend else { return }
        events.flush()
        flushBeforeSend = false
    }

    /// Sends without blocking; nil when libzmq took the message.
    private func send(_ frames: [Frame], on socket: Socket) -> SendFailure? {
        failure { try socket.send(frames, dontWait: true) }
    }

    /// Sends the hint in `hintBody` to `peer` on the device socket, as `send` does.
    private func sendHint(to peer: [UInt8]) -> SendFailure? {
        failure { try devices.send(to: peer, header: hintHeader, body: hintBody, dontWait: true) }
    }

    /// Why `send` (false: it would block, or no such peer) failed; nil when libzmq took the message.
    private func failure(of send: () throws -> Bool) -> SendFailure? {
        do {
            if try send() { return nil }
            // `send` returns false for both EAGAIN (the peer's pipe is at its high-water mark) and EHOSTUNREACH
            // (router-mandatory: no such peer). libzmq left the reason in errno and nothing ran since that could
            // change it, so it tells the two apart without a change to the ZeroMQ wrapper.
            return errno == EAGAIN ? .hwm : .unreachable
        } catch {
            events.emit("send.failed", [("error", .string("\(error)"))])
            return .unreachable
        }
    }
}
