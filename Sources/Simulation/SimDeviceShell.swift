import LabKit
import SQLite
import SyncDevice
import SyncProtocol

/// A device on the simulated machine: the same `DeviceDriver` a real process runs (the same `DeviceInstance`, the
/// same `Ledger` on a real SQLite file, the same order of commits, sends and events), over `SimWorld`'s links
/// instead of sockets; the poll timeout is a timer on the world's clock.
public final class SimDeviceShell: DeviceIO {
    public let configuration: DeviceConfiguration
    unowned let world: SimWorld
    let incarnation: Int
    public let pid: Int
    /// Makes the ledger's lease owner and install id, so a run depends on its seed alone.
    let generator: SeededGenerator
    /// The device's logic over this shell's IO; set once in `init`.
    /// Its events during a step, written at the step's end or before a send, lost if it dies first.
    private var held: HeldEvents!
    public private(set) var driver: DeviceDriver!
    /// The virtual µs of the one wake-up timer this device has set, if any.
    private var wakeScheduled: Int64?

    /// Opens the ledger as `DeviceShell.init` does; `generator` makes the ledger's lease owner and install id.
    public init(_ configuration: DeviceConfiguration, world: SimWorld, generator: SeededGenerator) throws {
        self.configuration = configuration
        self.world = world
        self.generator = generator
        incarnation = world.born(configuration.name)
        pid = world.pid()
        held = HeldEvents(world.log, proc: configuration.name)
        driver = try DeviceDriver(configuration, io: self)
    }

    public var name: String { configuration.name }
    var instance: DeviceInstance { driver.instance }
    var stopping: Bool { driver.stopping }

    /// Writes `process.started` and starts the instance.
    func begin() { driver.begin() }

    /// Killed: pending answers and timers die with the process.
    func abandon() { driver.abandon() }

    func tick() {
        guard !stopping else { return }
        driver.tick()
    }

    /// Releases what is in flight and writes `process.stopped` (a clean stop).
    func finish() {
        driver.finish()
        world.exited(name)
    }

    func onServerFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        driver.onServerFrames(frames)
        tick()
    }

    func onBrokerFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        driver.onBrokerFrames(frames)
        tick()
    }

    func onControlFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        driver.onControlFrames(frames)
        if stopping {
            finish()
        } else {
            tick()
        }
    }

    /// After every step: the poll timeout, as a timer at the instance's next wake (at least 1 ms of real time when
    /// that is already due, as `DeviceShell.pollTimeoutMs` waits).
    private func scheduleWake() {
        guard !stopping, !driver.killed, let wake = instance.nextWake else { return }
        var time = world.micros(atSim: wake)
        if time <= world.scheduler.now { time = world.scheduler.now + 1_000 }
        if let scheduled = wakeScheduled, scheduled > world.scheduler.now, scheduled <= time { return }
        wakeScheduled = time
        world.timer(name, incarnation: incarnation, at: time) { [unowned self] in
            if self.wakeScheduled == time { self.wakeScheduled = nil }
            self.tick()
        }
    }

    // MARK: - DeviceIO

    public var now: Double { world.simNow }
    public var wallMicros: Int64 { world.clock.epochMicros + world.scheduler.now }

    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { held.emit(type, fields) }
    public func emit(_ event: PassEvent) { held.emit(event) }
    public func stepBegan() { held.hold() }
    public func flushEvents() { held.flush() }

    public func stepEnded() {
        held.release()
        if driver.driveDepth == 0 { scheduleWake() }
    }

    /// A DEALER send never blocks here: with its peer down the message waits in the connection, as libzmq's does.
    public func transmit(_ message: Message, to peer: DevicePeer) -> String? {
        switch peer {
        case .server: world.toServer(from: name, incarnation: incarnation, frames: Codec.encode(message))
        case .broker: world.toBroker(from: name, incarnation: incarnation, frames: Codec.encode(message))
        }
        return nil
    }

    public func answerControl(_ message: Message, to peer: [UInt8]) {
        world.toLauncher(from: name, frames: Codec.encode(message))
    }

    public func die(at point: CrashPoint, nth: Int, work: Int) {
        world.die(name, pid: pid, point: point.rawValue, nth: nth, work: work, held: held, writingHeld: true)
    }

    public func dies(after boundary: DeviceBoundary) -> Bool {
        world.dies(name, pid: pid, held: held, after: boundary)
    }

    public func openLedger(wiping: Bool) throws -> Ledger {
        if wiping { try Ledger.removeFiles(at: configuration.databasePath) }
        return try Ledger(path: configuration.databasePath, synchronous: configuration.synchronous,
                          generator: generator)
    }
}
