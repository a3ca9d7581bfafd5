import LabKit
import SQLite
import SyncProtocol
import SyncServer

/// The server on the simulated machine: the same `ServerDriver` the real process runs (the same `ServerInstance`,
/// `ServerStore` on a real SQLite file, design switches and crash points), over `SimWorld`'s links instead of
/// sockets; the fault plan's delayed replies wait on the world's clock.
public final class SimServerShell: ServerIO {
    public let configuration: ServerConfiguration
    unowned let world: SimWorld
    let incarnation: Int
    public let pid: Int
    /// How `db` is named in `process.started`: relative to the run folder, so the bytes do not depend on `--out`.
    let databaseLabel: String
    /// Replies held back by the fault plan, by number, until their time comes (or a stop sends them).
    private var delayed: [Int: [[UInt8]]] = [:]
    private var nextDelayed = 0
    /// The server's logic over this shell's IO; set once in `init`.
    /// Its events during a step, written at the step's end or before a send, lost if it dies first.
    private var held: HeldEvents!
    public private(set) var driver: ServerDriver!

    public init(_ configuration: ServerConfiguration, world: SimWorld, databaseLabel: String) throws(ServerError) {
        self.configuration = configuration
        self.world = world
        self.databaseLabel = databaseLabel
        incarnation = world.born(configuration.name)
        pid = world.pid()
        held = HeldEvents(world.log, proc: configuration.name)
        driver = try ServerDriver(configuration, io: self)
    }

    var name: String { configuration.name }
    var stopping: Bool { driver.stopping }

    func start() {
        var started: [(String, JSONValue)] = [
            ("role", "server"), ("pid", .int(pid)), ("listen", .string(configuration.listen)),
            ("db", .string(databaseLabel)),
        ]
        if let control = configuration.process.control { started.append(("control", .string(control))) }
        if configuration.settings.switches != .correct { started += configuration.settings.switches.fields }
        if let notify = configuration.notify {
            started.append(("notify", .string(notify)))
            started.append(("notifyMode", .string(configuration.settings.notifyMode.rawValue)))
        }
        emit(.processStarted, started)
    }

    /// Killed: nothing more is written or sent.
    func abandon() { delayed.removeAll() }

    func onDeviceFrames(_ frames: [[UInt8]]) {
        guard !stopping, let (peer, payload) = Peer.split(frames) else { return }
        driver.onDeviceMessage(from: peer, frames: payload)
    }

    func onControlFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        driver.onControlFrames(frames)
        if stopping { close() }
    }

    private func close() {
        for number in delayed.keys.sorted() { driver.send(delayed[number]!) }
        delayed.removeAll()
        emit(.processStopped, [("role", "server"), ("pid", .int(pid)),
                                 ("refusalsSuppressed", .int(driver.refusals.suppressedTotal))])
        world.exited(name)
    }

    // MARK: - ServerIO

    public var nanos: UInt64 { UInt64(max(0, world.scheduler.now)) * 1_000 }
    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { held.emit(type, fields) }
    public func stepBegan() { held.hold() }
    public func stepEnded() { held.release() }
    public func flushEvents() { held.flush() }

    /// A reply that cannot be routed is lost; the device resends with the same key.
    public func sendDevice(_ frames: [[UInt8]]) -> String? {
        world.fromServer(frames) ? nil : "the peer is gone or not reading"
    }

    public func delay(_ frames: [[UInt8]], ms: Int) {
        let number = nextDelayed
        nextDelayed += 1
        delayed[number] = frames
        world.timer(name, incarnation: incarnation, at: world.scheduler.now + Int64(ms) * 1_000) { [unowned self] in
            if let frames = self.delayed.removeValue(forKey: number) { self.driver.send(frames) }
        }
    }

    public func sendControl(_ frames: [[UInt8]]) {
        guard configuration.process.control != nil else { return }
        world.toLauncher(from: name, frames: Array(frames.dropFirst()))
    }

    public func sendNotice(_ frames: [[UInt8]]) -> Bool? {
        guard configuration.notify != nil else { return nil }
        return world.notice(frames, mode: configuration.settings.notifyMode.rawValue,
                            highWaterMark: configuration.settings.notifyHighWaterMark)
    }

    public func die(at point: CrashPoint, nth: Int, work: Int) {
        world.die(name, pid: pid, point: point.rawValue, nth: nth, work: work, held: held, writingHeld: true)
    }

    public func dies(after boundary: ServerBoundary) -> Bool {
        world.dies(name, pid: pid, held: held, after: boundary)
    }
}
