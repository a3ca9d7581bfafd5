import Foundation
import LabKit
import SQLite
import SyncProtocol
import ZeroMQ

/// The device's IO: a DEALER to the server, a DEALER to the broker (hints arrive there), the control ROUTER, the
/// event file and the timers (the poll timeout). Its `DeviceDriver` feeds events to the `DeviceInstance` and carries
/// out what it decides against the ledger; this shell only moves bytes. Runs on the thread that calls `run()`; a
/// `DevicePool` drives many shells from one thread through `begin()`, `onFrames(from:)`, `tick()` and `finish()`.
public final class DeviceShell: DeviceIO {
    public let configuration: DeviceConfiguration
    let events: EventLog
    let context: Context
    /// The device's own DEALER to the server; nil in a pool with CURVE, whose `serverLink` carries its messages.
    let server: Socket?
    let broker: Socket?
    /// In a pool with CURVE: the pool's one broker connection and its one server connection, which this device's
    /// messages share under its envelope (then `broker` and `server` are nil), and the envelope.
    let brokerLink: PoolLink?
    let serverLink: PoolLink?
    let envelope: [UInt8]
    let control: Socket?
    /// Where control acks go: the device's own ROUTER, or its pool's.
    var replySocket: Socket?
    /// False in a pool, whose context outlives each device.
    let ownsContext: Bool
    /// CURVE with a control socket of its own: the context's ZAP handler, which admits only the launcher's key.
    let zap: ZapHandler?
    /// How the ledger holds its file: `.exclusive` in a pool, whose files nothing else opens while it runs (no
    /// `-shm` lock calls per transaction); `.normal` alone, so `status --db` reads a running device.
    let ledgerLocking: Locking
    /// The device writes into its pool's event log (`EventLog(sharing:process:)`): what it emitted is written where
    /// a message actually leaves (the pool's links, its own sockets, the control reply), so a pull the pool holds for
    /// a bundle, and the pool's turn, cost one `write(2)` for every device's lines.
    let sharesEvents: Bool
    /// The device's logic over this shell's IO; set once in `init`.
    public private(set) var driver: DeviceDriver!
    /// The sockets sent on since the loop last waited (`run`): each is asked for its events before the next wait.
    var sentOn = SentOn()

    /// Which of the device's own sockets a turn sent on: a send can take the signal of its socket's descriptor.
    struct SentOn {
        var server = false, broker = false, control = false
    }

    /// Opens the ledger and the sockets. Throws when the database or an endpoint cannot be used. A pool hands in its
    /// one context, so a thousand devices share one libzmq IO thread instead of starting one each.
    public convenience init(_ configuration: DeviceConfiguration, context shared: Context? = nil) throws {
        try self.init(configuration, context: shared, brokerLink: nil, serverLink: nil)
    }

    init(_ configuration: DeviceConfiguration, context shared: Context?, brokerLink: PoolLink?,
         serverLink: PoolLink?, ledgerLocking: Locking = .normal, sharedEvents: EventLog? = nil) throws
    {
        self.configuration = configuration
        self.ledgerLocking = ledgerLocking
        self.brokerLink = brokerLink
        self.serverLink = serverLink
        envelope = Array(configuration.identity.device.utf8)
        events = try sharedEvents.map { EventLog(sharing: $0, process: configuration.name) }
            ?? EventLog(path: configuration.eventsPath, process: configuration.name, clock: configuration.clock)
        sharesEvents = sharedEvents != nil
        self.context = try shared ?? Context()
        ownsContext = shared == nil
        let keys = try configuration.keys?.load()
        if let keys, configuration.controlEndpoint != nil {
            // Before the control socket binds: without a handler libzmq would admit every key.
            zap = try ZapHandler(context, policy: ["control": keys.launcher.map { [$0: "launcher"] } ?? [:]])
        } else if configuration.controlEndpoint != nil {
            // NULL admits everyone; the handler is there to give each connection its routing id.
            zap = try ZapHandler(context, policy: [:], open: true)
        } else {
            zap = nil
        }
        if serverLink == nil {
            // No routing id of its own: the server's ZAP handler gives each connection one.
            let server = try Socket(context, .dealer)
            try server.setReconnectInterval(ms: 50)
            if let keys { try server.setCurveClient(keys.own, serverKey: keys.server) }
            try server.connect(configuration.serverEndpoint)
            self.server = server
        } else {
            server = nil
        }
        broker = brokerLink != nil ? nil : try DeviceSockets.broker(context, endpoint: configuration.brokerEndpoint,
                                                                     own: keys?.own, brokerKey: keys?.broker)
        control = try DeviceSockets.control(context, endpoint: configuration.controlEndpoint, own: keys?.own)
        replySocket = control
        driver = try DeviceDriver(configuration, io: self)
    }

    public var instance: DeviceInstance { driver.instance }
    var stopping: Bool { driver.stopping }

    /// Serves until `stop`, SIGTERM or SIGINT; then releases what is in flight and returns.
    ///
    /// Waits with one `epoll` over the sockets' descriptors (`EdgePoller`), asking only the sockets a turn used
    /// (read, sent on, or signalled) for their events before the next wait: `zmq_poll` asked each of the three or four
    /// sockets twice a wake, a `poll(2)` and a `getpid(2)` each (docs/PERFORMANCE.md). A wait that ends with nothing
    /// ready (a timeout, at most 100 ms) asks every socket again, so a signal lost to a use not marked costs at most
    /// that long, never a hang.
    public func run() throws {
        Signals.install()
        begin()
        let poller = try EdgePoller()
        for socket in sockets { try poller.add(socket) }
        let zapIndex = try zap.map { try poller.add($0.socket) }
        let indexOf = { [sockets] (socket: Socket?) in socket.flatMap { s in sockets.firstIndex { $0 === s } } }
        let (serverIndex, brokerIndex, controlIndex) = (indexOf(server), indexOf(broker), indexOf(control))
        while !stopping && !Signals.stopRequested {
            let ready: [Int]
            do {
                ready = try poller.wait(timeoutMs: min(pollTimeoutMs(), zap?.nextReplyInMs ?? Int.max))
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            // Readable, or holding replies that fall due (ZapHandler).
            if let zap, let zapIndex, zap.holding || ready.contains(zapIndex) {
                try zap.serve()
                poller.touch(zapIndex)
            }
            for index in ready where index != zapIndex {
                try onFrames(from: poller.sockets[index])
                poller.touch(index)
            }
            tick()
            if ready.isEmpty { poller.touchAll() }
            if sentOn.server, let serverIndex { poller.touch(serverIndex) }
            if sentOn.broker, let brokerIndex { poller.touch(brokerIndex) }
            if sentOn.control, let controlIndex { poller.touch(controlIndex) }
            sentOn = SentOn()
        }
        finish()
    }

    /// The sockets to poll: server and broker (when it has its own) and control (when it has its own).
    var sockets: [Socket] {
        var sockets: [Socket] = []
        if let server { sockets.append(server) }
        if let broker { sockets.append(broker) }
        if let control { sockets.append(control) }
        return sockets
    }

    /// Writes `process.started` and starts the instance.
    func begin() { driver.begin() }

    /// Reads everything waiting on one of this shell's sockets.
    func onFrames(from socket: Socket) throws {
        while !stopping, let frames = try socket.receive(dontWait: true) {
            if socket === server {
                driver.onServerFrames(frames)
            } else if socket === broker {
                driver.onBrokerFrames(frames)
            } else {
                driver.onControlFrames(frames)
            }
        }
    }

    /// Lets the instance act on time passing (timeouts, leases, the platform scheduler).
    func tick() { driver.tick() }

    /// Releases what is in flight, writes `process.stopped` and closes the sockets.
    func finish() {
        driver.finish()
        server?.close()
        broker?.close()
        // The answer to `stop` (or anything else queued on control) goes out before the process exits.
        try? control?.setLinger(ms: 500)
        control?.close()
        zap?.close()
        if ownsContext { context.terminate() }
    }

    /// The device's `nextWake` as its pool's last sweep read it (`DevicePool.tick`), to be used again by that sweep
    /// when it does not tick the device.
    var sweptWake: Double?

    /// Real ms until the instance next has something to do, bounded so signals are noticed quickly.
    func pollTimeoutMs() -> Int { pollTimeoutMs(wake: driver.nextWake) }

    /// The same for a `nextWake` already read.
    func pollTimeoutMs(wake: Double?) -> Int {
        guard let wake else { return 100 }
        let realMs = (wake - now) / configuration.clock.scale * 1_000
        guard realMs.isFinite else { return 100 }
        return Int(max(1, min(100, realMs.rounded(.up))))
    }

    // MARK: - DeviceIO

    public var now: Double { configuration.clock.now() }
    public var wallMicros: Int64 { SimClock.wallMicros() }
    public var pid: Int { Int(getpid()) }

    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { events.emit(type, fields) }
    /// Straight into the event line, with no field list built: a receiving pass writes six of these.
    public func emit(_ event: PassEvent) { events.emit(event.quoted) { event.write(to: &$0) } }
    public func stepBegan() { events.hold() }
    public func stepEnded() { events.release() }
    public func flushEvents() { if !sharesEvents { events.flush() } }

    public func transmit(_ message: Message, to peer: DevicePeer) -> String? {
        if peer == .broker, let brokerLink { return brokerLink.send(Codec.encode(message), for: envelope) }
        if peer == .server, let serverLink { return serverLink.send(Codec.encode(message), for: envelope) }
        guard let socket = peer == .server ? server : broker else { return "no \(peer.rawValue) link" }
        if peer == .server { sentOn.server = true } else { sentOn.broker = true }
        if sharesEvents { events.flush() }
        do {
            return try socket.send(Codec.encode(message), dontWait: true) ? nil : "would block"
        } catch {
            return "\(error)"
        }
    }

    public func answerControl(_ message: Message, to peer: [UInt8]) {
        sentOn.control = true
        if sharesEvents { events.flush() }
        _ = try? replySocket?.send([peer] + Codec.encode(message), dontWait: true)
    }

    public func die(at point: CrashPoint, nth: Int, work: Int) {
        CrashPoints.die(at: point, nth: nth, work: work, events: events)
    }

    public func openLedger(wiping: Bool) throws -> Ledger {
        if wiping { try Ledger.removeFiles(at: configuration.databasePath) }
        return try Ledger(path: configuration.databasePath, synchronous: configuration.synchronous,
                          locking: ledgerLocking)
    }
}
