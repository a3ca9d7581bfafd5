import LabKit
import PushBroker
import SyncProtocol

/// The broker on the simulated machine: the same `BrokerDriver` the real process runs (the same `BrokerInstance`,
/// chaos, hint data, crash points and refusal limits), over `SimWorld`'s links instead of sockets; a hint goes out
/// to the device's connection and the outcome of the send goes back to the instance before the next directive.
public final class SimBrokerShell: BrokerIO {
    public let configuration: BrokerConfiguration
    unowned let world: SimWorld
    let incarnation: Int
    public let pid: Int
    /// Its events during a batch, written before a send and at the end, lost if it dies first.
    private var held: HeldEvents!
    /// The broker's logic over this shell's IO; set once in `init`.
    public private(set) var driver: BrokerDriver!

    public init(_ configuration: BrokerConfiguration, directory: AccountDirectory, world: SimWorld) {
        self.configuration = configuration
        self.world = world
        incarnation = world.born(configuration.name)
        pid = world.pid()
        held = HeldEvents(world.log, proc: configuration.name)
        driver = BrokerDriver(configuration, directory: directory, io: self)
    }

    var name: String { configuration.name }
    var stopping: Bool { driver.stopping }

    func start() {
        driver.started(pid: pid, listen: configuration.listen, notices: configuration.notices,
                       control: configuration.process.control)
    }

    func onNoticeFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        batch { driver.onNoticeFrames(frames, now: nowSim) }
    }

    func onDeviceFrames(_ frames: [[UInt8]], peer: [UInt8]) {
        guard !stopping else { return }
        batch { driver.onDeviceFrames(frames, peer: peer, now: nowSim) }
    }

    func onControlFrames(_ frames: [[UInt8]], peer: [UInt8]) {
        guard !stopping else { return }
        batch { driver.onControlFrames(frames, peer: peer, now: nowSim) }
        if stopping { close() }
    }

    /// The tick the real shell's loop makes once `wakeAt` has come (a timer, or a resume after a pause).
    func onWake() {
        guard !stopping, let wake = driver.wakeAt else { return }
        guard wake <= nowSim else {
            tickRequested(at: wake)
            return
        }
        batch { driver.tickIfDue(now: nowSim) }
    }

    /// One message as the real shell's batch of one: its events held, written at the end.
    private func batch(_ body: () -> Void) {
        held.hold()
        body()
        held.release()
        driver.batchEnded()
    }

    private func close() {
        emit(.processStopped, driver.stopped(pid: pid))
        world.exited(name)
    }

    // MARK: - BrokerIO

    public var nanos: UInt64 { UInt64(max(0, world.scheduler.now)) * 1_000 }
    public var nowSim: Double { world.simNow }
    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { held.emit(type, fields) }
    public func flushEvents() { held.flush() }

    public func emitHintEvent(_ directive: BrokerDirective) {
        if let line = directive.event { held.emit(line.type, line.fields) }
    }

    public func sendHint(to peer: [UInt8], body: [UInt8]) -> SendFailure? {
        var frames = Codec.encode(.hint(Hint(hint: "h-0", account: "a", head: 0)))
        frames[frames.count - 1] = body
        return world.fromBroker(to: peer, frames: frames, highWaterMark: Int(configuration.settings.hintHWM))
    }

    public func reply(on socket: BrokerSocket, to peer: [UInt8], _ frames: [[UInt8]]) {
        switch socket {
        case .devices:
            _ = world.fromBroker(to: peer, frames: Array(frames.dropFirst()), highWaterMark: Int.max)
        case .control:
            if configuration.process.control != nil {
                world.toLauncher(from: name, frames: Array(frames.dropFirst()))
            }
        }
    }

    public func tickRequested(at: Double) {
        world.timer(name, incarnation: incarnation, at: world.micros(atSim: at)) { [unowned self] in self.onWake() }
    }

    public func die(at point: CrashPoint, nth: Int, work: Int) {
        world.die(name, pid: pid, point: point.rawValue, nth: nth, work: work, held: held, writingHeld: true)
    }

    public func dies(after boundary: BrokerBoundary) -> Bool {
        world.dies(name, pid: pid, held: held, after: boundary)
    }
}
