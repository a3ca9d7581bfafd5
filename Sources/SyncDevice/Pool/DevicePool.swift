import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// Many devices in one process: one libzmq context, one IO thread, one `epoll` over every pooled device's
/// DEALERs (with CURVE: the pool's one server DEALER and one broker DEALER instead) and the pool's control ROUTER
/// (`EdgePoller`). Each device is a `DeviceShell` (its own ledger file, instance,
/// identity and sockets), driven exactly as in a process of its own, so the logic is not forked; only the poll loop is
/// shared.
public final class DevicePool {
    public let configuration: DevicePoolConfiguration
    let context: Context
    let control: Socket?
    let events: EventLog
    /// Live devices by id, and their order in the spec.
    var shells: [String: DeviceShell] = [:]
    var order: [String] = []
    /// Which devices each turn ticks, and when the loop next looks at every device.
    var ticks = PoolTicks()
    /// `syncAll` requests waiting for their devices' passes.
    var gathers: [Int: SyncGather] = [:]
    var nextGather = 1
    var stopping = false
    /// CURVE: the ZAP handler of the pool's context (the control socket admits only the launcher's key).
    let zap: ZapHandler?
    /// CURVE: the pool's one connection to the broker and its one to the server, shared by every device
    /// (docs/PROTOCOL.md §13 and §14, "Pooled links").
    let brokerLink: PoolLink?
    let serverLink: PoolLink?

    /// Opens every device's ledger and sockets and the pool's control socket; throws naming what could not be used.
    public init(_ configuration: DevicePoolConfiguration) throws {
        self.configuration = configuration
        events = try EventLog(path: configuration.eventsPath, process: configuration.name, clock: configuration.clock)
        context = try Context()
        var own: CurveKeyPair?
        if let keyFile = configuration.keyFile {
            own = try CurveKeyPair.read(secretFile: keyFile)
            let launcher = try configuration.launcherKeyFile.map { path throws(CurveKeyError) in
                try CurveKeyPair.read(publicFile: path)
            }
            zap = try ZapHandler(context, policy: ["control": launcher.map { [$0: "launcher"] } ?? [:]])
        } else if configuration.controlEndpoint != nil {
            // NULL admits everyone; the handler is there to give each connection its routing id.
            zap = try ZapHandler(context, policy: [:], open: true)
        } else {
            zap = nil
        }
        control = try DeviceSockets.control(context, endpoint: configuration.controlEndpoint, own: own)
        let links = try Self.links(configuration, context: context, own: own)
        brokerLink = links.broker
        serverLink = links.server
        // The devices write into the pool's event log, which the links write out before anything leaves on them.
        let shared = configuration.devices.allSatisfy { $0.eventsPath == configuration.eventsPath }
        for link in [links.broker, links.server].compactMap({ $0 }) where shared {
            link.beforeSend = { [events] in events.flush() }
        }
        for device in configuration.devices {
            var own = device
            own.controlEndpoint = nil
            // Nothing else opens a pooled device's file while the pool runs (the launcher reads them after it
            // stopped): each ledger keeps its file to itself, without SQLite's `-shm` locks on every transaction.
            let shell = try DeviceShell(own, context: context, brokerLink: brokerLink, serverLink: serverLink,
                                        ledgerLocking: .exclusive, sharedEvents: shared ? events : nil)
            shell.replySocket = control
            shells[device.identity.device] = shell
            order.append(device.identity.device)
        }
    }

    var now: Double { configuration.clock.now() }

    /// With the pool's own key: the one server link (the devices' keys name the server's key), and with a broker
    /// endpoint and the broker's key the one broker link, each authenticated by the pool's key.
    static func links(_ configuration: DevicePoolConfiguration, context: Context, own: CurveKeyPair?) throws
        -> (broker: PoolLink?, server: PoolLink?)
    {
        guard let own, let first = configuration.devices.first, let keys = first.keys else { return (nil, nil) }
        let count = configuration.devices.count
        // The pulls the devices make in one turn go to the server together (docs/PROTOCOL.md §15).
        let server = try PoolLink(context, endpoint: first.serverEndpoint, own: own,
                                  serverKey: try CurveKeyPair.read(publicFile: keys.serverKeyFile), devices: count,
                                  bundlesPulls: true)
        guard let endpoint = first.brokerEndpoint, let brokerKeyFile = keys.brokerKeyFile else { return (nil, server) }
        // The broker sends a notice's hints to this pool's devices in bundles of hints (docs/PROTOCOL.md §16).
        return (try PoolLink(context, endpoint: endpoint, own: own,
                             serverKey: try CurveKeyPair.read(publicFile: brokerKeyFile), devices: count,
                             bundledHeader: MessageBundle.hintHeader), server)
    }

    /// Serves until `stop` (without `args.device`), SIGTERM or SIGINT; then stops every device and returns.
    public func run() throws {
        Signals.install()
        events.emit(.processStarted, [("role", "pool"), ("pid", .int(Int(getpid()))),
                                        ("devices", .int(order.count))])
        events.hold()
        for id in order { shells[id]?.begin() }
        serverLink?.flush()
        events.release()
        var poller = try EdgePoller()
        var owners: [String?] = []
        var indexes: [String: [Int]] = [:]
        // The sockets no device owns (control, ZAP, the broker link): asked again after every turn.
        var unowned: [Int] = []
        var dirty = true
        while !stopping && !Signals.stopRequested {
            if dirty {
                (poller, owners, indexes) = try makePoller()
                unowned = owners.indices.filter { owners[$0] == nil }
                dirty = false
            }
            let ready: [Int]
            do {
                ready = try poller.wait(timeoutMs: min(pollTimeoutMs(), zap?.nextReplyInMs ?? Int.max))
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            // A turn's events go out in one write: at its end, or where a message leaves before it (the links, a
            // device's own socket, a control reply).
            events.hold()
            defer { events.release() }
            // Readable, or holding replies that fall due (ZapHandler).
            if let zap, zap.holding || ready.contains(where: { poller.sockets[$0] === zap.socket }) {
                try zap.serve()
            }
            var touched: Set<String> = []
            var controlled = false
            for index in ready {
                let socket = poller.sockets[index]
                guard let id = owners[index] else {
                    if let serverLink, socket === serverLink.socket {
                        touched.formUnion(try serverLink.drain { device, frames in
                            guard let shell = shells[device], !shell.stopping else { return false }
                            shell.driver.onServerFrames(frames)
                            return true
                        })
                    } else if let brokerLink, socket === brokerLink.socket {
                        touched.formUnion(try brokerLink.drain { device, frames in
                            guard let shell = shells[device], !shell.stopping else { return false }
                            shell.driver.onBrokerFrames(frames)
                            return true
                        })
                    } else if socket !== zap?.socket {
                        try onControlSocket(socket)
                        controlled = true
                    }
                    continue
                }
                guard let shell = shells[id] else { continue }
                try shell.onFrames(from: socket)
                touched.insert(id)
            }
            // A control command may have changed any device (its timers, `stop`): then every device is looked at.
            let ticked = tick(touched, sweep: controlled)
            if controlled { dirty = retireStopped() || dirty }
            expireGathers()
            // The pulls this turn's passes made, in as few messages as fit (docs/PROTOCOL.md §15).
            serverLink?.flush()
            // What was used is asked again before the next wait (EdgePoller): a send or receive may have taken its
            // descriptor's signal. A control command may have made any device send (`syncAll`): then every socket.
            if controlled {
                poller.touchAll()
            } else {
                for index in unowned { poller.touch(index) }
                for id in ticked.union(touched) { indexes[id]?.forEach(poller.touch) }
            }
        }
        for id in order { shells[id]?.finish() }
        shells = [:]
        serverLink?.flush()
        brokerLink?.close()
        serverLink?.close()
        answerAllGathers()
        var stopped: [(String, JSONValue)] = [("role", "pool"), ("pid", .int(Int(getpid())))]
        if let serverLink { stopped.append(("pulls", serverLink.counters)) }
        if let brokerLink { stopped.append(("hintLink", brokerLink.receivedCounters)) }
        events.emit(.processStopped, stopped)
        try? control?.setLinger(ms: 500)
        control?.close()
        zap?.close()
        context.terminate()
    }

    /// The control socket first (owner nil), then each live device's sockets; and each device's indexes.
    func makePoller() throws -> (EdgePoller, [String?], [String: [Int]]) {
        let poller = try EdgePoller()
        var owners: [String?] = []
        var indexes: [String: [Int]] = [:]
        if let control {
            try poller.add(control)
            owners.append(nil)
        }
        if let zap {
            try poller.add(zap.socket)
            owners.append(nil)
        }
        for link in [serverLink, brokerLink].compactMap({ $0 }) {
            try poller.add(link.socket)
            owners.append(nil)
        }
        for id in order {
            guard let shell = shells[id] else { continue }
            for socket in shell.sockets {
                indexes[id, default: []].append(try poller.add(socket))
                owners.append(id)
            }
        }
        return (poller, owners, indexes)
    }

    /// Real ms until the next sweep (the soonest any device may have something to do), at most 100.
    func pollTimeoutMs() -> Int { ticks.timeoutMs(wall: SimClock.monotonicNanos()) }

    /// Ticks the devices that received something and are due and, at a sweep (its time has come, or `sweep`), every
    /// device that is due or idle for long (`PoolTicks`). Returns the devices it ticked.
    func tick(_ touched: Set<String>, sweep: Bool) -> Set<String> {
        let wall = SimClock.monotonicNanos()
        let nowSim = now
        // Each device the turn looks at has its next wake read once: a device it does not tick keeps that wake
        // (devices never change one another within a turn), so the wakes below use it again instead of asking anew.
        let (ids, sweeping) = ticks.plan(wall: wall, forced: sweep, touched: touched, order: order) { id in
            guard let shell = shells[id] else { return false }
            let wake = shell.driver.nextWake
            shell.sweptWake = wake
            return wake.map { $0 <= nowSim } ?? false
        }
        for id in ids { shells[id]?.tick() }
        let ticked = Set(ids)
        for id in sweeping ? order : Array(touched) {
            guard let shell = shells[id] else { continue }
            let wake = ticked.contains(id) ? shell.driver.nextWake : shell.sweptWake
            ticks.wakes(id, inMs: shell.pollTimeoutMs(wake: wake), wall: wall)
        }
        return ticked
    }

    /// Stops the devices that were told `stop` on their own; true when one was removed (the poller is rebuilt).
    func retireStopped() -> Bool {
        var removed = false
        for id in order {
            guard let shell = shells[id], shell.stopping else { continue }
            shell.finish()
            shells[id] = nil
            ticks.forget(id)
            removed = true
            for key in gathers.keys { gathers[key]?.drop(id) }
        }
        if removed { answerFinishedGathers() }
        return removed
    }
}
