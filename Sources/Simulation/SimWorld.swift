import Foundation
import LabKit
import PushBroker
import SQLite
import Synchronization
import SyncProtocol
import SyncServer

/// One simulated machine: the clock, the agenda, the network and every process on it, as instances with their sim
/// shells. Processes are named as in a real run (`server`, `broker`, a device id); each start is a new incarnation,
/// and whatever was addressed to an earlier incarnation (a reply in flight, a timer) is lost with it, as it is with
/// a killed process. A paused process keeps what arrives for it, in order, until it is resumed.
///
/// Connections are modelled as libzmq's: a DEALER that sends while its ROUTER peer is down keeps the message and
/// delivers it once the peer is back (`SimRouter.queued`); a ROUTER that replies to a connection that is gone fails
/// at once (router-mandatory); every new connection gets a new routing id from a counter.
public final class SimWorld {
    public let scheduler: SimScheduler
    public let log: SimEventLog
    public let clock: SimClock
    var network: SimNetwork
    public internal(set) var server: SimServerShell?
    public internal(set) var broker: SimBrokerShell?
    public internal(set) var devices: [String: SimDeviceShell] = [:]
    /// Live incarnation of each running process.
    private(set) var alive: [String: Int] = [:]
    private var starts: [String: Int] = [:]
    private(set) var paused: Set<String> = []
    private var inbox: [String: [() -> Void]] = [:]
    private var nextPid = 1000

    private let serverRouter = SimRouter(peer: "server")
    private let brokerRouter = SimRouter(peer: "broker")
    private var nextRoutingID: UInt32 = 0x0001_0000
    private var queuedNotices: [[[UInt8]]] = []

    /// Crash-anywhere's kills still to come (`SimRun` draws them from the seed).
    public var plannedCrashes: [PlannedCrash] = []
    /// Told of each process that died by itself, with the point it died at.
    public var onCrash: ((_ process: String, _ point: String) -> Void)?

    /// The launcher's control connection to every process (a DEALER per process in a real run).
    public static let launcherPeer: [UInt8] = [0, 0, 0, 0, 1]
    private var acks: [Int: ControlAck] = [:]
    private var nextReq = 1

    /// Where the processes' databases live.
    public let storage: SimStorage
    /// With `memory`: each database's in-memory path, the file in the run folder it stands for, and the world's own
    /// connection that keeps it for the whole run.
    private var stores: [(path: String, file: String, keeper: Database)] = []
    private var storeIndex: [String: Int] = [:]
    /// The prefix of this world's in-memory names (they are shared across the process).
    private let storeSpace: String
    private static let worlds = Mutex(0)

    public init(clock: SimClock, seed: UInt64, eventsPath: String, start: Int64, storage: SimStorage = .files) throws {
        self.clock = clock
        self.storage = storage
        scheduler = SimScheduler(start: start)
        log = try SimEventLog(path: eventsPath, clock: clock, scheduler: scheduler)
        network = SimNetwork(seed: seed)
        storeSpace = "synclab-sim-\(getpid())-\(Self.worlds.withLock { $0 += 1; return $0 })"
    }

    /// Simulated seconds now.
    public var simNow: Double { clock.sim(atWall: clock.epochMicros + scheduler.now) }

    /// The first virtual µs at which simulated time has reached `sim`.
    public func micros(atSim sim: Double) -> Int64 {
        guard sim.isFinite else { return Int64.max / 2 }
        var t = Int64((sim / clock.scale * 1_000_000).rounded(.up))
        while clock.sim(atWall: clock.epochMicros + t) < sim { t += 1 }
        return t
    }

    /// Breaks the references between the agenda and the processes once a run is over, and writes the in-memory
    /// databases to their files (`writeStores`).
    public func tearDown() throws {
        log.close()
        server = nil
        broker = nil
        devices.removeAll()
        inbox.removeAll()
        try writeStores()
    }

    // MARK: - Storage

    /// The path a process opens the database the run folder keeps at `file` on: `file` itself with `files`; with
    /// `memory`, an in-memory database of that file's own, made (and kept) on first use.
    public func storePath(for file: String) throws -> String {
        guard storage == .memory else { return file }
        if let index = storeIndex[file] { return stores[index].path }
        // The number first: SQLite finds a shared in-memory database by comparing its name with every other's, so
        // names that differ in their first bytes keep that search short at thousands of devices.
        let path = Database.inMemory(name: "\(stores.count).\(storeSpace)")
        let keeper = try Database(path: path, synchronous: .off)
        storeIndex[file] = stores.count
        stores.append((path, file, keeper))
        return path
    }

    /// Writes each in-memory database that holds anything to its file (replacing what is there) and lets go of it;
    /// nothing with `files`. Once every process is gone: a database is written as its last commit left it.
    public func writeStores() throws {
        defer {
            stores.removeAll()
            storeIndex.removeAll()
        }
        for store in stores {
            guard try store.keeper.scalarInt("SELECT count(*) FROM sqlite_schema") ?? 0 > 0 else { continue }
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.file + suffix) }
            try store.keeper.write(to: store.file)
        }
    }

    // MARK: - Processes

    func pid() -> Int {
        nextPid += 1
        return nextPid
    }

    /// Registers a new incarnation of `name`; returns it.
    func born(_ name: String) -> Int {
        let incarnation = (starts[name] ?? 0) + 1
        starts[name] = incarnation
        alive[name] = incarnation
        return incarnation
    }

    public func isRunning(_ name: String) -> Bool { alive[name] != nil }
    /// How many processes are running (paused ones included).
    public var runningCount: Int { alive.count }
    public func isPaused(_ name: String) -> Bool { paused.contains(name) }

    public func add(server shell: SimServerShell) {
        server = shell
        shell.start()
        sendQueued(on: serverRouter, with: toServer(from:incarnation:frames:))
    }

    public func add(broker shell: SimBrokerShell) {
        broker = shell
        shell.start()
        sendQueued(on: brokerRouter, with: toBroker(from:incarnation:frames:))
        let notices = queuedNotices
        queuedNotices.removeAll()
        for frames in notices { _ = notice(frames, mode: "push", highWaterMark: Int.max) }
    }

    public func add(device shell: SimDeviceShell) {
        devices[shell.name] = shell
        shell.begin()
    }

    /// The loss of a process's memory: its instance and whatever it held are gone; its database file stays.
    public func kill(_ name: String) {
        alive[name] = nil
        paused.remove(name)
        inbox[name] = nil
        if name == "server" {
            server?.abandon()
            server = nil
        } else if name == "broker" {
            broker = nil
        } else {
            devices[name]?.abandon()
            devices[name] = nil
        }
    }

    /// A process died by itself in the middle of a step (an armed crash point, or crash-anywhere): as `kill`, while
    /// its shell is still on the stack (it carries out nothing more); `onCrash` tells the runner.
    func crashed(_ name: String, point: String) {
        kill(name)
        onCrash?(name, point)
    }

    /// `name` dies in the middle of a step at `point`: at a crash point what the step held is written first, as
    /// `CrashPoints.die` writes it; at a crash-anywhere boundary it is lost, as with a SIGKILL (the `process.crashing`
    /// line is then the simulation's note). Then `crashed`.
    func die(_ name: String, pid: Int, point: String, nth: Int, work: Int? = nil, held: HeldEvents,
             writingHeld: Bool) {
        if writingHeld { held.flush() } else { held.drop() }
        var fields: [(String, JSONValue)] = [("point", .string(point)), ("nth", .int(nth))]
        if let work { fields.append(("work", .int(work))) }
        log.emit(name, .processCrashing, fields + [("pid", .int(pid))])
        crashed(name, point: point)
    }

    /// Crash-anywhere for a process's shell: when `name` dies right after `boundary`, it dies there (what it held
    /// lost) and this says so.
    func dies<Boundary: RawRepresentable>(_ name: String, pid: Int, held: HeldEvents, after boundary: Boundary) -> Bool
    where Boundary.RawValue == String {
        guard crashesHere(name, boundary: boundary.rawValue) else { return false }
        die(name, pid: pid, point: "anywhere.after-\(boundary.rawValue)", nth: 1, held: held, writingHeld: false)
        return true
    }

    /// Crash-anywhere: whether `name` dies right after this `boundary` (a directive, a commit, a send or a reply).
    /// Each planned crash counts the process's boundaries once its time has come and fires on the one it drew.
    func crashesHere(_ name: String, boundary: String) -> Bool {
        guard let index = plannedCrashes.firstIndex(where: { $0.process == name && $0.after <= scheduler.now })
        else { return false }
        plannedCrashes[index].seen += 1
        guard plannedCrashes[index].seen >= plannedCrashes[index].boundary else { return false }
        plannedCrashes.remove(at: index)
        return true
    }

    /// The process clean-stopped itself (the control command `stop`).
    func exited(_ name: String) {
        alive[name] = nil
        paused.remove(name)
        inbox[name] = nil
        if name == "server" { server = nil } else if name == "broker" { broker = nil } else { devices[name] = nil }
    }

    public func pause(_ name: String) {
        guard alive[name] != nil else { return }
        paused.insert(name)
    }

    /// A resumed process reads what waited for it, in order (and what arrives meanwhile, after it), then looks at
    /// its timers: as the next action, not within the caller's, as a process given SIGCONT runs after the signal.
    public func resume(_ name: String) {
        guard let incarnation = alive[name], paused.remove(name) != nil else { return }
        scheduler.at(scheduler.now) { [unowned self] in self.drain(name, incarnation) }
    }

    private func drain(_ name: String, _ incarnation: Int) {
        while alive[name] == incarnation, !paused.contains(name), var waiting = inbox[name], !waiting.isEmpty {
            let action = waiting.removeFirst()
            inbox[name] = waiting
            action()
        }
        guard alive[name] == incarnation, !paused.contains(name) else { return }
        inbox[name] = nil
        devices[name]?.tick()
        if name == "broker" { broker?.onWake() }
    }

    /// Runs `action` for incarnation `incarnation` of `name` once a message on `link` has crossed it; lost when that
    /// incarnation is gone by then, kept in order while the process is paused.
    func deliver(to name: String, incarnation: Int, link: String, _ action: @escaping () -> Void) {
        let time = network.arrival(on: link, now: scheduler.now)
        scheduler.at(time) { [unowned self] in self.arrive(name, incarnation, action) }
    }

    /// A timer of incarnation `incarnation` of `name` fires at `time` (a paused process sees it when resumed).
    func timer(_ name: String, incarnation: Int, at time: Int64, _ action: @escaping () -> Void) {
        scheduler.at(time) { [unowned self] in self.arrive(name, incarnation, action) }
    }

    private func arrive(_ name: String, _ incarnation: Int, _ action: @escaping () -> Void) {
        guard alive[name] == incarnation else { return }
        if paused.contains(name) || inbox[name] != nil {
            inbox[name, default: []].append(action)
            return
        }
        action()
    }

    func inboxCount(_ name: String) -> Int { inbox[name]?.count ?? 0 }

    // MARK: - Device ↔ server

    func toServer(from device: String, incarnation: Int, frames: [[UInt8]]) {
        send(to: serverRouter, from: device, incarnation: incarnation, frames: frames) { world, routing in
            world.server?.onDeviceFrames([routing] + frames)
        }
    }

    /// A reply on the server's device ROUTER; false when the connection is gone.
    func fromServer(_ frames: [[UInt8]]) -> Bool {
        guard let routing = frames.first, let owner = liveOwner(of: routing, on: serverRouter) else { return false }
        let payload = Array(frames.dropFirst())
        deliver(to: owner.device, incarnation: owner.deviceIncarnation, link: "server>\(owner.device)") {
            [unowned self] in
            self.devices[owner.device]?.onServerFrames(payload)
        }
        return true
    }

    // MARK: - Device ↔ broker

    func toBroker(from device: String, incarnation: Int, frames: [[UInt8]]) {
        send(to: brokerRouter, from: device, incarnation: incarnation, frames: frames) { world, routing in
            world.broker?.onDeviceFrames(frames, peer: routing)
        }
    }

    /// A message on the broker's device ROUTER: nil when sent, else why not (gone, or the paused device's queue is
    /// at the high-water mark).
    func fromBroker(to peer: [UInt8], frames: [[UInt8]], highWaterMark: Int) -> SendFailure? {
        guard let owner = liveOwner(of: peer, on: brokerRouter) else { return .unreachable }
        if paused.contains(owner.device) && inboxCount(owner.device) >= highWaterMark { return .hwm }
        deliver(to: owner.device, incarnation: owner.deviceIncarnation, link: "broker>\(owner.device)") {
            [unowned self] in
            self.devices[owner.device]?.onBrokerFrames(frames)
        }
        return nil
    }

    /// A notice from the server's PUSH (or PUB) socket; false when PUSH would have blocked.
    func notice(_ frames: [[UInt8]], mode: String, highWaterMark: Int) -> Bool {
        guard let brokerIncarnation = alive["broker"] else {
            // PUB drops for an absent subscriber; PUSH keeps up to its high-water mark for the peer it connects to.
            guard mode == "push" else { return true }
            guard queuedNotices.count < highWaterMark else { return false }
            queuedNotices.append(frames)
            return true
        }
        deliver(to: "broker", incarnation: brokerIncarnation, link: "server>broker") { [unowned self] in
            self.broker?.onNoticeFrames(frames)
        }
        return true
    }

    /// A device's DEALER sends `frames` to `router`'s process: kept while that process is down, else `arrive` runs
    /// there with the connection's routing id once the message has crossed the link.
    private func send(to router: SimRouter, from device: String, incarnation: Int, frames: [[UInt8]],
                      arrive: @escaping (SimWorld, _ routing: [UInt8]) -> Void)
    {
        guard let peerIncarnation = alive[router.peer] else {
            router.queued.append((device, incarnation, frames))
            return
        }
        let connection = SimRouter.Connection(device: device, deviceIncarnation: incarnation,
                                              peerIncarnation: peerIncarnation)
        let routing = router.routing(for: connection, counter: &nextRoutingID)
        deliver(to: router.peer, incarnation: peerIncarnation, link: "\(device)>\(router.peer)") { [unowned self] in
            arrive(self, routing)
        }
    }

    /// Sends again, with `send`, what devices sent to `router`'s process while it was down, from the incarnations
    /// that are still alive; the rest is lost with them.
    private func sendQueued(on router: SimRouter, with send: (String, Int, [[UInt8]]) -> Void) {
        for item in router.queued where alive[item.device] == item.incarnation {
            send(item.device, item.incarnation, item.frames)
        }
        router.queued.removeAll()
    }

    /// The connection `routing` names on `router`, while both its ends are still the incarnations it joined.
    private func liveOwner(of routing: [UInt8], on router: SimRouter) -> SimRouter.Connection? {
        guard let owner = router.owners[routing], alive[owner.device] == owner.deviceIncarnation,
              alive[router.peer] == owner.peerIncarnation
        else { return nil }
        return owner
    }

    // MARK: - Launcher ↔ control sockets

    /// A control reply from `name` to the launcher.
    func toLauncher(from name: String, frames: [[UInt8]]) {
        let time = network.arrival(on: "\(name)>launcher", now: scheduler.now)
        scheduler.at(time) { [unowned self] in
            if case .success(.controlAck(let ack)) = Codec.decodeOrReply(frames) { self.acks[ack.req] = ack }
        }
    }

    /// Sends `command` to `name`'s control socket and runs the simulation until its answer arrives or `timeout`
    /// virtual µs pass; nil when there was no answer.
    public func call(_ name: String, _ command: String, _ args: [String: JSONValue] = [:],
                     timeoutMicros: Int64 = 5_000_000) -> ControlAck?
    {
        let req = post(name, command, args)
        let deadline = scheduler.now + timeoutMicros
        // A process that dies while it carries the command out (an armed crash point) ends the wait.
        scheduler.run(until: deadline) { acks[req] != nil || alive[name] == nil }
        return acks.removeValue(forKey: req)
    }

    /// Sends `command` without waiting for the answer; returns its req.
    @discardableResult
    public func post(_ name: String, _ command: String, _ args: [String: JSONValue] = [:]) -> Int {
        let req = nextReq
        nextReq += 1
        let frames = Codec.encode(.control(Control(req: req, command: command, args: args)))
        guard let incarnation = alive[name] else { return req }
        deliver(to: name, incarnation: incarnation, link: "launcher>\(name)") { [unowned self] in
            if name == "server" {
                self.server?.onControlFrames([Self.launcherPeer] + frames)
            } else if name == "broker" {
                self.broker?.onControlFrames(frames, peer: Self.launcherPeer)
            } else {
                self.devices[name]?.onControlFrames([Self.launcherPeer] + frames)
            }
        }
        return req
    }

    func ackArrived(_ req: Int) -> Bool { acks[req] != nil }
    func removeAck(_ req: Int) -> ControlAck? { acks.removeValue(forKey: req) }

    /// Lets virtual time pass.
    public func run(for micros: Int64) { scheduler.run(until: scheduler.now + micros) }
    public func run(until micros: Int64) { scheduler.run(until: micros) }
}

extension SimWorld {
    /// Whether the answer to `req` has arrived.
    public func hasAck(_ req: Int) -> Bool { ackArrived(req) }

    /// The answer to `req`, removed; nil when it has not arrived.
    public func takeAck(_ req: Int) -> ControlAck? { removeAck(req) }
}

/// One kill crash-anywhere will make: `process` dies at its `boundary`-th boundary (counting from 1) after virtual
/// µs `after`.
public struct PlannedCrash: Sendable, Equatable {
    public var process: String
    public var after: Int64
    public var boundary: Int
    var seen = 0

    public init(process: String, after: Int64, boundary: Int) {
        self.process = process
        self.after = after
        self.boundary = boundary
    }
}
