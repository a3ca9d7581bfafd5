import LabKit
import PushBroker
import SyncProtocol

/// `BrokerShell`'s twin on the simulated machine: the same `BrokerInstance`, its directives carried out in the same
/// order with the same events; a hint goes out on `SimWorld`'s link to the device's connection and the outcome of
/// the send goes back to the instance before the next directive, as in `BrokerShell.carryOut`.
public final class SimBrokerShell {
    public let configuration: BrokerConfiguration
    unowned let world: SimWorld
    let incarnation: Int
    var instance: BrokerInstance
    public let pid: Int
    /// The earliest simulated second the instance asked to be ticked at.
    private var wakeAt: Double?
    private var stopping = false

    public init(_ configuration: BrokerConfiguration, directory: AccountDirectory, world: SimWorld) {
        self.configuration = configuration
        self.world = world
        instance = BrokerInstance(directory: directory, profiles: configuration.profiles, chaos: configuration.chaos,
                                  reorderWindowSec: configuration.reorderWindowSec, seed: configuration.seed)
        incarnation = world.born(configuration.name)
        pid = world.pid()
    }

    var name: String { configuration.name }
    var now: Double { world.simNow }

    func emit(_ type: String, _ fields: [(String, JSONValue)]) { world.log.emit(name, type, fields) }

    func start() {
        let profiles = configuration.profiles
        emit("process.started", [
            ("role", "broker"), ("pid", .int(pid)), ("listen", .string(configuration.listen)),
            ("notices", .string(configuration.notices)), ("noticesMode", .string(configuration.noticesMode.rawValue)),
            ("control", configuration.control.map { .string($0) } ?? .null),
            ("seed", .string(String(configuration.seed))),
            ("timeScale", .double(configuration.timeScale)),
            ("profiles", .object([
                ("android", .string(profiles.android.rawValue)), ("ios", .string(profiles.ios.rawValue)),
                ("web", .string(profiles.web.rawValue)),
            ])),
        ])
        if !configuration.chaos.isOff {
            emit("fault.set", [("scope", "global"), ("source", "flags")] + configuration.chaos.fields)
        }
    }

    func onNoticeFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        carryOut(instance.onNoticeMessage(frames, now: now))
    }

    func onDeviceFrames(_ frames: [[UInt8]], peer: [UInt8]) {
        guard !stopping else { return }
        carryOut(instance.onDeviceMessage(frames, peer: peer, now: now))
    }

    func onControlFrames(_ frames: [[UInt8]], peer: [UInt8]) {
        guard !stopping else { return }
        carryOut(instance.onControlMessage(frames, peer: peer, now: now))
        if stopping { close() }
    }

    /// The tick the real shell's loop makes once `wakeAt` has come (a timer, or a resume after a pause).
    func onWake() {
        guard !stopping, let wake = wakeAt else { return }
        guard wake <= now else {
            scheduleWake()
            return
        }
        wakeAt = nil
        carryOut(instance.onTick(now: now))
    }

    private func scheduleWake() {
        guard let wake = wakeAt else { return }
        world.timer(name, incarnation: incarnation, at: world.micros(atSim: wake)) { [unowned self] in self.onWake() }
    }

    private func carryOut(_ directives: [BrokerDirective]) {
        for directive in directives {
            switch directive {
            case let .deliver(device, peer, hint, copy):
                let failure = world.fromBroker(to: peer, frames: Codec.encode(.hint(hint)),
                                               highWaterMark: Int(configuration.hintHWM))
                carryOut(instance.onSent(device: device, hint: hint, copy: copy, failure: failure, now: now))
            case let .reply(socket, peer, message):
                switch socket {
                case .devices:
                    _ = world.fromBroker(to: peer, frames: Codec.encode(message), highWaterMark: Int.max)
                case .control:
                    if configuration.control != nil { world.toLauncher(from: name, frames: Codec.encode(message)) }
                }
            case let .scheduleTick(at):
                let earlier = wakeAt.map { at < $0 } ?? true
                wakeAt = min(wakeAt ?? at, at)
                if earlier { scheduleWake() }
            case .log, .hintAccepted, .hintDelivered:
                if let line = directive.event { emit(line.type, line.fields) }
            case .stop:
                stopping = true
            }
        }
    }

    private func close() {
        emit("process.stopped", [("role", "broker"), ("pid", .int(pid)), ("hints", .object(instance.counters.fields))])
        world.exited(name)
    }
}
