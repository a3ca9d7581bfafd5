import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// The broker's IO: binds the notices, device and control sockets and feeds what arrives and the clock's ticks to
/// its `BrokerDriver`, which carries out the instance's directives and hands sends back here. Runs on the calling
/// thread (the process's main thread): `zmq_poll` blocks, so it never runs on the cooperative pool.
public final class BrokerShell: BrokerIO {
    public let configuration: BrokerConfiguration
    private let clock: SimClock
    private let events: EventLog
    private let context: Context
    private let notices: Socket
    private let devices: Socket
    private let control: Socket?
    /// The types of a hint's two lines, kept as their lines spell them.
    private let hintAccepted = EventCatalogue.hintAccepted.quoted
    private let hintDelivered = EventCatalogue.hintDelivered.quoted
    /// The header frame of every hint.
    private let hintHeader = MessageBundle.hintHeader
    /// CURVE: the ZAP handler (devices: the accounts file's keys; control: the launcher's; notices: the server's) and
    /// the monitor that ends a registration's binding when its connection closes. nil under NULL.
    private let zap: ZapHandler?
    private let monitor: ConnectionMonitor?
    /// Pools' multiplexed connections (CURVE only: a pool is known by its key); empty under NULL.
    private var pooled = PooledPeers(members: [:])
    /// The broker's logic over this shell's IO; set once in `init`.
    public private(set) var driver: BrokerDriver!

    /// Messages read from one socket before looking at the others, so a flood of notices cannot starve control.
    static let batch = 256
    /// The longest poll: how soon a SIGTERM is noticed when nothing else happens.
    static let maxPollMs = 100

    /// Opens the event log and binds every socket; throws when an endpoint cannot be bound.
    public init(configuration: BrokerConfiguration, directory: AccountDirectory) throws {
        self.configuration = configuration
        let process = configuration.process
        self.clock = process.epochMicros.map { SimClock(epochMicros: $0, scale: process.timeScale) }
            ?? SimClock.startingNow(scale: process.timeScale)
        self.events = try EventLog(path: process.events, process: configuration.name, clock: clock)
        context = try Context()
        var own: CurveKeyPair?
        if let keyFile = configuration.process.keyFile {
            let pair = try CurveKeyPair.read(secretFile: keyFile)
            own = pair
            let launcher = try configuration.process.launcherKeyFile.map { path throws(CurveKeyError) in
                try CurveKeyPair.read(publicFile: path)
            }
            let server = try CurveKeyPair.read(publicFile: configuration.serverKeyFile ?? "")
            let accounts = try AccountsFile.load(path: configuration.accountsPath)
            pooled = PooledPeers(members: accounts.poolMembers)
            // Before any CURVE socket binds: without a handler libzmq would admit every key. A pool's key is admitted
            // as its pool id (never a device's: the accounts file keeps the two apart).
            zap = try ZapHandler(context, policy: [
                "devices": accounts.devicesByPublicKey.merging(accounts.poolsByPublicKey) { device, _ in device },
                "control": launcher.map { [$0: "launcher"] } ?? [:],
                "notices": [server: "server"],
            ])
        } else {
            // NULL admits everyone; the handler is there to give each connection its routing id.
            zap = try ZapHandler(context, policy: [:], open: true)
        }
        notices = try Socket(context, configuration.settings.noticesMode == .sub ? .sub : .pull)
        try notices.setReceiveHighWaterMark(configuration.settings.noticesHWM)
        if configuration.settings.noticesMode == .sub { try notices.subscribe() }
        if let own { try notices.setCurveServer(own, domain: "notices") }
        try notices.bind(configuration.notices)
        // No ZMQ_ROUTER_HANDOVER: the ZAP handler gives every connection a fresh routing id, and a duplicate (which
        // only a race in libzmq could let a peer present) is then refused by libzmq instead of taking over a pipe.
        devices = try Socket.boundRouter(context, endpoint: configuration.listen, security: own, domain: "devices") {
            try $0.setRouterMandatory(true)
            try $0.setSendHighWaterMark(configuration.settings.hintHWM)
        }
        monitor = own == nil ? nil : try ConnectionMonitor(context, watching: devices)
        if let endpoint = configuration.process.control {
            // A linger, so the acknowledgement of `stop` still leaves after the socket closes: with linger 0 it is
            // dropped whenever libzmq's IO thread has not written it yet, which a loaded machine makes likely.
            control = try Socket.boundRouter(context, endpoint: endpoint, security: own, domain: "control",
                                             lingerMs: 500)
        } else {
            control = nil
        }
        driver = BrokerDriver(configuration, directory: directory, io: self)
    }

    private var stopping: Bool { driver.stopping }

    /// Serves until SIGTERM, SIGINT or the control command `stop`, then writes `process.stopped`.
    public func run() throws {
        Signals.install()
        driver.started(pid: Int(getpid()), listen: devices.lastEndpoint, notices: notices.lastEndpoint,
                       control: control?.lastEndpoint)
        // One epoll over the sockets' descriptors (EdgePoller): a wake asks the sockets the turn used, not every
        // socket twice as zmq_poll does. The devices socket (hints, replies) and every ready socket are asked again
        // before the next wait; a wait that ends with nothing ready asks them all.
        let poller = try EdgePoller()
        for socket in [notices, devices] + (control.map { [$0] } ?? []) { try poller.add(socket) }
        if let zap { try poller.add(zap.socket) }
        if let monitor { try poller.add(monitor.socket) }
        let devicesIndex = 1
        while !stopping && !Signals.stopRequested {
            let now = clock.now()
            if driver.tickIfDue(now: now) {
                poller.touch(devicesIndex)
                continue
            }
            let ready: [Int]
            do {
                ready = try poller.wait(timeoutMs: min(pollTimeout(now: now), zap?.nextReplyInMs ?? Int.max))
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            defer {
                if ready.isEmpty || zap?.holding == true { poller.touchAll() }
                for index in ready { poller.touch(index) }
                poller.touch(devicesIndex)
            }
            // Ended connections first, so a registration's binding is gone before a new connection is read.
            if let monitor, ready.contains(where: { poller.sockets[$0] === monitor.socket }) {
                for connection in try monitor.ended() {
                    driver.onConnectionEnded(connection)
                    pooled.ended(connection)
                }
            }
            // Readable, or holding replies that fall due (ZapHandler).
            if let zap, zap.holding || ready.contains(where: { poller.sockets[$0] === zap.socket }) { serveZap(zap) }
            for index in ready {
                let socket = poller.sockets[index]
                if socket !== zap?.socket && socket !== monitor?.socket { try drain(socket) }
            }
        }
        zap?.close()
        monitor?.close()
        events.emit(.processStopped, driver.stopped(pid: Int(getpid())))
        notices.close()
        devices.close()
        // The answer to `stop` (queued just before) goes out before the socket closes.
        try? control?.setLinger(ms: 500)
        control?.close()
        // Waits (at most each socket's linger) for what is queued, the `stop` ack among it, before the exit.
        context.terminate()
    }

    private func pollTimeout(now: Double) -> Int {
        guard let wake = driver.wakeAt else { return Self.maxPollMs }
        let ms = (clock.realSeconds(wake - now) * 1000).rounded(.up)
        return Int(min(max(ms, 0), Double(Self.maxPollMs)))
    }

    /// Reads up to `batch` messages. Their events are held and written with one `write(2)` before each send that
    /// they may precede (a notice's accepted hints go out together), and the rest when the batch ends.
    private func drain(_ socket: Socket) throws {
        events.hold()
        defer {
            events.release()
            driver.batchEnded()
        }
        for _ in 0..<Self.batch {
            guard let received = try socket.receiveWithSender(dontWait: true) else { return }
            let frames = received.frames
            let now = clock.now()
            if socket === notices {
                driver.onNoticeFrames(frames, now: now)
            } else if socket === devices {
                let connection = monitor == nil ? -1 : received.connection
                if let pool = received.userID, pooled.isPool(pool) {
                    onPooledFrames(Array(frames.dropFirst()), peer: frames[0], pool: pool, connection: connection,
                                   now: now)
                } else {
                    driver.onDeviceFrames(Array(frames.dropFirst()), peer: frames[0], now: now, user: received.userID,
                                          connection: connection)
                }
            } else {
                driver.onControlFrames(Array(frames.dropFirst()), peer: frames[0], now: now)
            }
            if stopping { return }
        }
    }

    /// A message on a pool's connection: handed to the instance as from the device it names (its virtual peer, with
    /// the device as the connection's user), or refused when the pool's key does not speak for that device: then a
    /// rate-limited `request.refused` (code `unknownDevice`) and an error back under the named device's envelope,
    /// and nothing else (no entry, no state).
    private func onPooledFrames(_ frames: [Frame], peer: [UInt8], pool: String, connection: Int32, now: Double) {
        switch pooled.admit(frames, peer: peer, pool: pool, connection: connection) {
        case let .device(device, virtualPeer, rest):
            driver.onDeviceFrames(rest, peer: virtualPeer, now: now, user: device, connection: connection)
        case let .refused(envelope, message):
            driver.refused([("code", "unknownDevice"), ("message", .string(message)),
                            ("peer", .string("pool \(pool)@\(PeerName.describe(peer))"))])
            _ = send([peer, envelope] + Codec.encode(.error(ErrorReply(code: .unknownDevice, message: message))),
                     on: devices)
        }
    }

    // MARK: - BrokerIO

    public var nanos: UInt64 { SimClock.monotonicNanos() }
    public var nowSim: Double { clock.now() }
    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { events.emit(type, fields) }
    public func flushEvents() { events.flush() }

    public func emitHintEvent(_ directive: BrokerDirective) {
        switch directive {
        case let .hintAccepted(target, hint, notice, resync):
            writeAccepted(target, hint: hint, notice: notice, resync: resync)
        case let .hintDelivered(target, hint, waitedSec):
            events.emit(hintDelivered) { line in
                line.add("hint", prefix: "h-", hint.number)
                line.add(target.deliveredFields, hint.head)
                line.add("waitedSec", waitedSec)
            }
        default:
            if let line = directive.event { events.emit(line.type, line.fields) }
        }
    }

    public func emitHintAccepted(_ target: HintTarget, hint: HintRef, notice: NoticeFields) {
        writeAccepted(target, hint: hint, notice: notice, resync: false)
    }

    /// The fields in the order of `BrokerDirective.event`: hint, device, account, head, origin, seqs, reason.
    private func writeAccepted(_ target: HintTarget, hint: HintRef, notice: NoticeFields, resync: Bool) {
        events.emit(hintAccepted) { line in
            line.add("hint", prefix: "h-", hint.number)
            line.add(target.acceptedFields, hint.head)
            line.add(notice.fields)
            if resync { line.add("reason", "resync") }
        }
    }

    public func sendHint(to peer: [UInt8], body: [UInt8]) -> SendFailure? {
        if let route = pooled.route(peer) {
            return failure { try devices.send([route.peer, route.device, hintHeader, body], dontWait: true) }
        }
        return failure { try devices.send(to: peer, header: hintHeader, body: body, dontWait: true) }
    }

    public func bundleRoute(_ peer: [UInt8]) -> (connection: [UInt8], device: [UInt8])? {
        pooled.route(peer).map { ($0.peer, $0.device) }
    }

    public func sendHints(on connection: [UInt8], _ hints: [(device: [UInt8], body: [UInt8])]) -> [SendFailure?] {
        let entries = hints.map { MessageBundle.Entry(device: $0.device, header: hintHeader, body: $0.body) }
        var failures: [SendFailure?] = []
        failures.reserveCapacity(hints.count)
        for message in MessageBundle.messages(entries, maxBytes: Int(Socket.maxMessageBytes)) {
            let failure = send([connection] + message.frames, on: devices)
            failures += repeatElement(failure, count: message.entries)
        }
        return failures
    }

    public func reply(on socket: BrokerSocket, to peer: [UInt8], _ frames: [[UInt8]]) {
        guard let target = socket == .devices ? devices : control else { return }
        if socket == .devices, let route = pooled.route(peer) {
            _ = send([route.peer, route.device] + frames.dropFirst(), on: target)
            return
        }
        // A peer that left before its answer is nobody's loss: its request changed nothing or is logged.
        _ = send(frames, on: target)
    }

    public func die(at point: CrashPoint, nth: Int, work: Int) {
        CrashPoints.die(at: point, nth: nth, work: work, events: events)
    }

    /// Answers the ZAP handler; a refused key is a rate-limited `request.refused` (code `badKey`).
    private func serveZap(_ zap: ZapHandler) {
        guard let decisions = try? zap.serve() else { return }
        for decision in decisions where decision.userID == nil {
            let key = decision.publicKey.isEmpty ? "none" : decision.publicKey
            driver.refused([
                ("code", "badKey"), ("message", .string("\(decision.mechanism) key \(key) is not admitted")),
                ("peer", .string("\(decision.domain)@\(decision.address)")),
            ])
        }
    }

    /// Sends without blocking; nil when libzmq took the message.
    private func send(_ frames: [Frame], on socket: Socket) -> SendFailure? {
        failure { try socket.send(frames, dontWait: true) }
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
            events.emit(.sendFailed, [("error", .string("\(error)"))])
            return .unreachable
        }
    }
}
