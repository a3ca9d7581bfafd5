import Foundation
import LabKit
import SQLite
import SyncProtocol
import ZeroMQ

/// The server's IO: the device and control ROUTERs, the notice socket, the database, the event log and a small
/// queue of delayed replies. One thread (the caller of `run`) owns all of them; it polls, hands each message to the
/// `ServerInstance`, and carries out the directives it returns, in order.
public final class ServerShell: ServerIO {
    public let configuration: ServerConfiguration
    let events: EventLog
    let context: Context
    let devices: Socket
    let control: Socket?
    let notices: Socket?
    /// Replies held back by the fault plan, soonest first.
    var delayed: [(due: UInt64, frames: [[UInt8]])] = []
    /// CURVE: the context's ZAP handler (admits the accounts file's keys on `devices`, the launcher's on `control`)
    /// and the monitor that ends a connection's session when it closes. nil under NULL.
    let zap: ZapHandler?
    let monitor: ConnectionMonitor?
    /// Pools' multiplexed connections (docs/PROTOCOL.md §14; CURVE only: a pool is known by its key); empty under
    /// NULL.
    var pooled = PooledPeers(members: [:])
    /// While a pool's bundle of pulls is handled: its connection and the replies gathered for it, sent together
    /// when the last entry is done or when they reach `bundleReplyBytes` (docs/PROTOCOL.md §15).
    var bundleReplies: (peer: [UInt8], entries: [MessageBundle.Entry], bytes: Int)?
    /// The most reply bytes gathered before they go, and the largest bundle of replies: a page's own bound
    /// (`Limits.maxBodyBytes`), so a bundle weighs on the reply queue no more than one page does (docs/SECURITY.md).
    static let bundleReplyBytes = Limits.maxBodyBytes
    /// The server's logic over this shell's IO (the store, the instance, crash points); set once in `init`.
    public private(set) var driver: ServerDriver!

    /// Longest poll, so SIGTERM is seen promptly even if it lands just before the poll starts.
    static let maxPollMs = 200
    /// Messages handled from one socket before looking at the others.
    static let drainBatch = 256
    /// Replies queued for one connection before more are dropped (`reply.lost`): with pages under
    /// `Limits.maxBodyBytes` (1 MiB), a client that never reads pins at most this many MiB of replies
    /// (devices have one request in flight, a push or a pull, so a legitimate one never comes near it).
    static let replyHighWaterMark: Int32 = 8

    /// The device ROUTER's reply queue per connection: `replyHighWaterMark`, plus two per device of the largest pool,
    /// whose one connection carries a request in flight for each of its devices (and libzmq counts what the IO
    /// thread has not yet taken in batches, so one per device would drop replies a pool is owed). libzmq has one
    /// high-water mark for every pipe of a socket, so a device's own connection gets the same bound.
    static func replyHighWaterMark(largestPool: Int) -> Int32 {
        replyHighWaterMark + Int32(clamping: 2 * largestPool)
    }

    /// Opens the event log and the database, loads the accounts file, binds and connects the sockets.
    /// Every failure names the flag or file at fault.
    public init(_ configuration: ServerConfiguration) throws(ServerError) {
        self.configuration = configuration
        // Before anything slow: a SIGTERM during start-up is then a clean stop, not a kill.
        Signals.install()
        let clock = SimClock(epochMicros: configuration.process.epochMicros ?? SimClock.wallMicros(),
                             scale: configuration.process.timeScale)
        do {
            events = try EventLog(path: configuration.process.events, process: configuration.name, clock: clock)
        } catch {
            throw .startup("cannot open --events: \(error)")
        }
        var keys: (own: CurveKeyPair, launcher: String?, broker: String?)?
        if let keyFile = configuration.process.keyFile {
            do {
                keys = (try CurveKeyPair.read(secretFile: keyFile),
                        try configuration.process.launcherKeyFile.map { path throws(CurveKeyError) in
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
            var pools = PooledPeers(members: [:])
            if let keys {
                // Before any CURVE socket binds: without a handler libzmq would admit every key.
                var deviceKeys: [String: String] = [:]
                if let path = configuration.accountsPath {
                    let accounts = try AccountsFile.load(path: path)
                    // A pool's key is admitted as its pool id (never a device's: the accounts file keeps the two
                    // apart); its messages then name the device they are for (docs/PROTOCOL.md §14).
                    deviceKeys = accounts.devicesByPublicKey.merging(accounts.poolsByPublicKey) { device, _ in device }
                    pools = PooledPeers(members: accounts.poolMembers)
                }
                zap = try ZapHandler(context, policy: [
                    "devices": deviceKeys, "control": keys.launcher.map { [$0: "launcher"] } ?? [:],
                ])
            } else {
                // NULL admits everyone; the handler is there to give each connection its routing id.
                zap = try ZapHandler(context, policy: [:], open: true)
            }
            devices = try Self.router(context, bind: configuration.listen, flag: "listen", curve: keys?.own,
                                      domain: "devices",
                                      sendHighWaterMark: Self.replyHighWaterMark(largestPool: pools.largestPool))
            pooled = pools
            monitor = keys == nil ? nil : try ConnectionMonitor(context, watching: devices)
            control = try configuration.process.control.map {
                try Self.router(context, bind: $0, flag: "control", curve: keys?.own, domain: "control")
            }
            notices = try configuration.notify.map {
                try Self.noticeSocket(context, connect: $0, mode: configuration.settings.notifyMode,
                                      highWaterMark: configuration.settings.notifyHighWaterMark,
                                      curve: keys.map { ($0.own, $0.broker!) })
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw .startup("cannot set up sockets: \(error)")
        }
        driver = try ServerDriver(configuration, io: self)
    }

    var stopping: Bool { driver.stopping }

    private static func noticeSocket(_ context: Context, connect endpoint: String,
                                     mode: ServerSettings.NotifyMode, highWaterMark: Int,
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
        do {
            return try Socket.boundRouter(context, endpoint: endpoint, security: curve, domain: domain) {
                if let sendHighWaterMark { try $0.setSendHighWaterMark(sendHighWaterMark) }
                // An unroutable reply (the peer went away) fails instead of vanishing, so it can be logged.
                try $0.setRouterMandatory(true)
            }
        } catch {
            throw ServerError.startup("cannot bind --\(flag) \(endpoint): \(error)")
        }
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
        if configuration.settings.switches != .correct { started += configuration.settings.switches.fields }
        if let notify = configuration.notify {
            started.append(("notify", .string(notify)))
            started.append(("notifyMode", .string(configuration.settings.notifyMode.rawValue)))
        }
        events.emit(.processStarted, started)
        defer { close() }
        // One epoll over the sockets' descriptors (EdgePoller): a wake asks the sockets the turn used, not every
        // socket twice as zmq_poll does. The devices socket (replies, delayed ones too) and every ready socket are
        // asked again before the next wait; a wait that ends with nothing ready asks them all.
        let poller: EdgePoller
        var zapIndex = -1, monitorIndex = -1
        do {
            poller = try EdgePoller()
            for socket in [devices] + (control.map { [$0] } ?? []) { try poller.add(socket) }
            if let zap { zapIndex = try poller.add(zap.socket) }
            if let monitor { monitorIndex = try poller.add(monitor.socket) }
        } catch {
            throw .io("poll: \(error)")
        }
        while !stopping && !Signals.stopRequested {
            let ready: [Int]
            do {
                ready = try poller.wait(timeoutMs: min(pollTimeout(), zap?.nextReplyInMs ?? Int.max))
            } catch let error as ZMQError where error.isTerminated {
                break
            } catch {
                throw .io("poll: \(error)")
            }
            defer {
                if ready.isEmpty { poller.touchAll() }
                for index in ready { poller.touch(index) }
                poller.touch(0)
                if zapIndex >= 0 && zap?.holding == true { poller.touch(zapIndex) }
            }
            // Ended connections first, so their sessions are gone before a new connection's messages are read.
            if ready.contains(monitorIndex), let monitor {
                do {
                    // Every device of a pool's connection ends with it, as its own connection would.
                    for connection in try monitor.ended() {
                        driver.onConnectionEnded(connection)
                        pooled.ended(connection)
                    }
                } catch {
                    throw .io("monitor: \(error)")
                }
            }
            // Readable, or holding replies that fall due (ZapHandler).
            if let zap, zap.holding || ready.contains(zapIndex) { serveZap(zap) }
            if ready.contains(0) { try drainDevices() }
            if ready.contains(1), let control { try drain(control) { driver.onControlFrames($0) } }
            sendDueReplies(now: SimClock.monotonicNanos())
        }
    }

    /// Answers the ZAP handler's requests; a refused key is a rate-limited `request.refused` (code `badKey`).
    private func serveZap(_ zap: ZapHandler) {
        guard let decisions = try? zap.serve() else { return }
        for decision in decisions where decision.userID == nil {
            let peer = "\(decision.domain)@\(decision.address)"
            let key = decision.publicKey.isEmpty ? "none" : decision.publicKey
            driver.logRefusal(EventCatalogue.requestRefused.name, [
                ("code", "badKey"), ("message", .string("\(decision.mechanism) key \(key) is not admitted")),
                ("peer", .string(peer)),
            ])
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
            let connection = monitor == nil ? -1 : received.connection
            if let pool = received.userID, pooled.isPool(pool), let routing = received.frames.first {
                let frames = Array(received.frames.dropFirst())
                if MessageBundle.isBundle(frames) {
                    onPooledBundle(frames[2], peer: routing, pool: pool, connection: connection)
                } else {
                    onPooledFrames(frames, peer: routing, pool: pool, connection: connection)
                }
                continue
            }
            guard let (peer, payload) = Peer.split(received.frames, user: received.userID, connection: connection)
            else { continue }
            driver.onDeviceMessage(from: peer, frames: payload)
        }
    }

    /// A message on a pool's connection: handed to the instance as from the device it names (its virtual peer, with
    /// the device as the connection's user, so its hello, session and account checks are that device's own), or
    /// refused when the pool's key does not speak for that device: then a rate-limited `request.refused` (code
    /// `unknownDevice`) and an error back under the named device's envelope, and nothing else (no entry, no state).
    private func onPooledFrames(_ frames: [[UInt8]], peer: [UInt8], pool: String, connection: Int32) {
        switch pooled.admit(frames, peer: peer, pool: pool, connection: connection) {
        case let .device(device, virtualPeer, rest):
            driver.onDeviceMessage(from: Peer(routingID: virtualPeer, user: device, connection: connection),
                                   frames: rest)
        case let .refused(envelope, message):
            driver.logRefusal(EventCatalogue.requestRefused.name, [
                ("code", "unknownDevice"), ("message", .string(message)),
                ("peer", .string("pool \(pool)@\(Peer(routingID: peer).label)")),
            ])
            // Nobody answers an error, not even a refused one: no error loops between two peers.
            guard frames.count < 2 || frames[1] != ServerInstance.errorHeader else { return }
            _ = sendNow([peer, envelope] + Codec.encode(.error(ErrorReply(code: .unknownDevice, message: message))))
        }
    }

    private func close() {
        // A stop does not wait out the fault plan's delays: the replies are ready, so they go now.
        for reply in delayed { driver.send(reply.frames) }
        delayed.removeAll()
        devices.close()
        // The answer to `stop` (queued just before) goes out before the socket closes.
        try? control?.setLinger(ms: 500)
        control?.close()
        notices?.close()
        zap?.close()
        monitor?.close()
        events.emit(.processStopped, [("role", "server"), ("pid", .int(Int(getpid()))),
                                        ("refusalsSuppressed", .int(driver.refusals.suppressedTotal))])
        // Waits (at most each socket's linger) for what is queued, the `stop` ack and last notices among it.
        context.terminate()
    }

    /// A pool's bundle of pulls: each entry handled as the message it stands for (`onPooledFrames`), and the replies
    /// to them sent back as bundles. A bundle that cannot be read, or holds anything but pulls, is refused whole
    /// before any entry is handled: a rate-limited `request.refused` (code `badBundle`) and an error to the pool
    /// under an empty device frame.
    private func onPooledBundle(_ frame: [UInt8], peer: [UInt8], pool: String, connection: Int32) {
        let entries: [MessageBundle.Entry]
        do {
            entries = try MessageBundle.decode(frame, maxEntries: pooled.members[pool]?.count ?? 0,
                                               only: MessageBundle.pullHeader)
        } catch {
            let message = "pool \"\(pool)\"'s bundle refused: \(error); nothing was changed"
            driver.logRefusal(EventCatalogue.requestRefused.name, [
                ("code", "badBundle"), ("message", .string(message)),
                ("peer", .string("pool \(pool)@\(Peer(routingID: peer).label)")),
            ])
            _ = send([peer, []] + Codec.encode(.error(ErrorReply(code: .malformed, message: message))), on: devices)
            return
        }
        // The bundle's events are held until its replies leave (`sendBundleReplies` writes them first): one write
        // for the bundle instead of one before each reply it gathers.
        events.hold()
        bundleReplies = (peer, [], 0)
        for entry in entries {
            onPooledFrames([entry.device, entry.header, entry.body], peer: peer, pool: pool, connection: connection)
        }
        sendBundleReplies()
        bundleReplies = nil
        events.release()
    }

    /// Sends the replies gathered for the bundle being handled: one alone as its own message, more as bundles of at
    /// most `bundleReplyBytes`; a reply libzmq refuses is a `reply.lost`.
    private func sendBundleReplies() {
        guard let (peer, replies, _) = bundleReplies, !replies.isEmpty else { return }
        events.flush()
        bundleReplies?.entries.removeAll(keepingCapacity: true)
        bundleReplies?.bytes = 0
        for message in MessageBundle.messages(replies, maxBytes: Self.bundleReplyBytes) {
            guard let failure = send([peer] + message.frames, on: devices) else { continue }
            // A reply alone is its device's (its virtual peer); a bundle's, the pool connection's.
            let device = message.frames[0]
            driver.replyLost(peer: device.isEmpty ? peer : peer + [0] + device, header: message.frames[1],
                             reason: device.isEmpty ? "\(failure) (\(message.entries) replies)" : failure)
        }
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

    // MARK: - ServerIO

    public var nanos: UInt64 { SimClock.monotonicNanos() }
    public var pid: Int { Int(getpid()) }
    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { events.emit(type, fields) }
    public func stepBegan() { events.hold() }
    public func stepEnded() { events.release() }
    /// While a bundle is answered (it holds pulls only, so all it sends are device replies) the replies are gathered,
    /// not sent: they leave with `sendBundleReplies`, which writes the events first; one sent at once flushes in
    /// `sendNow`.
    public func flushEvents() {
        guard bundleReplies == nil else { return }
        events.flush()
    }

    public func sendDevice(_ frames: [[UInt8]]) -> String? {
        // A pooled device's reply goes to its pool's connection under its envelope.
        if let first = frames.first, let route = pooled.route(first) {
            if frames.count == 3, bundleReplies?.peer == route.peer {
                bundleReplies?.entries.append(MessageBundle.Entry(device: route.device, header: frames[1],
                                                                  body: frames[2]))
                bundleReplies?.bytes += frames[2].count
                if (bundleReplies?.bytes ?? 0) >= Self.bundleReplyBytes { sendBundleReplies() }
                return nil
            }
            return sendNow([route.peer, route.device] + frames.dropFirst())
        }
        return sendNow(frames)
    }

    /// A device reply that leaves at once: during a bundle the driver's flush before it was skipped, so it is made
    /// here.
    private func sendNow(_ frames: [[UInt8]]) -> String? {
        if bundleReplies != nil { events.flush() }
        return send(frames, on: devices)
    }

    public func delay(_ frames: [[UInt8]], ms: Int) {
        schedule(frames, due: SimClock.monotonicNanos() + UInt64(ms) * 1_000_000)
    }

    public func sendControl(_ frames: [[UInt8]]) {
        guard let control else { return }
        _ = send(frames, on: control)
    }

    public func sendNotice(_ frames: [[UInt8]]) -> Bool? {
        guard let notices else { return nil }
        return (try? notices.send(frames, dontWait: true)) ?? false
    }

    public func deviceAdded(_ record: DeviceRecord) {
        guard let zap, !zap.open else { return }
        // A new key replaces the device's old one: connections with the old key are refused.
        zap.policy["devices"] = zap.policy["devices", default: [:]].filter { $0.value != record.id }
        if let key = record.publicKey { zap.policy["devices"]?[key] = record.id }
    }

    public func die(at point: CrashPoint, nth: Int, work: Int) {
        CrashPoints.die(at: point, nth: nth, work: work, events: events)
    }

    /// Sends without blocking; nil when it left, otherwise why not.
    private func send(_ frames: [[UInt8]], on socket: Socket) -> String? {
        do {
            return try socket.send(frames, dontWait: true) ? nil : "the peer is gone or not reading"
        } catch {
            return "\(error)"
        }
    }

    // MARK: - Delayed replies

    private func schedule(_ frames: [[UInt8]], due: UInt64) {
        let index = delayed.firstIndex(where: { $0.due > due }) ?? delayed.endIndex
        delayed.insert((due, frames), at: index)
    }

    private func sendDueReplies(now: UInt64) {
        var sent = 0
        while sent < delayed.count && delayed[sent].due <= now {
            driver.send(delayed[sent].frames)
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
