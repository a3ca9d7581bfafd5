import LabKit
import SyncProtocol

/// What a `BrokerDriver` needs from the machine it runs on: `BrokerShell`'s sockets and event file, or the
/// simulated machine's links (`SimBrokerShell`). Nothing here decides anything.
public protocol BrokerIO: EventEmitter {
    /// Monotonic ns (real, or the simulation's virtual clock): the refusal limiter's seconds.
    var nanos: UInt64 { get }
    /// Simulated seconds now (the instance's `now`).
    var nowSim: Double { get }
    /// Writes `hint.accepted` or `hint.delivered` (a real shell straight into its pending bytes, with no field list).
    func emitHintEvent(_ directive: BrokerDirective)
    /// Writes `hint.accepted` for a hint of a fan-out (not a resync), as `emitHintEvent` writes it.
    func emitHintAccepted(_ target: HintTarget, hint: HintRef, notice: NoticeFields)
    /// Writes what the events hold before something leaves the process.
    func flushEvents()
    /// Sends a hint whose body frame is `body` to `peer` on the device socket; nil when it was taken.
    func sendHint(to peer: [UInt8], body: [UInt8]) -> SendFailure?
    /// When `peer` is a device on a pool's connection: the connection's routing id and the device's envelope frame,
    /// so its hints may go in bundles with the other hints of the same directives to that connection
    /// (docs/PROTOCOL.md §16); nil when its hints go one message each.
    func bundleRoute(_ peer: [UInt8]) -> (connection: [UInt8], device: [UInt8])?
    /// Sends hints (each a device's envelope and a hint body) to one pool connection as bundles (one alone as its own
    /// message); returns each hint's outcome, in order: nil when libzmq took the message that carried it.
    func sendHints(on connection: [UInt8], _ hints: [(device: [UInt8], body: [UInt8])]) -> [SendFailure?]
    /// Sends `frames` to `peer` on `socket`; a peer gone before its answer is nobody's loss.
    func reply(on socket: BrokerSocket, to peer: [UInt8], _ frames: [[UInt8]])
    /// The instance asked to be ticked at simulated second `at` (the earliest one asked so far is `wakeAt`).
    func tickRequested(at: Double)
    /// An armed crash point fired: a real process dies here and never returns; the simulation marks it dead.
    func die(at point: CrashPoint, nth: Int, work: Int)
    /// Crash-anywhere: true when the process dies right after this boundary. A real process says false.
    func dies(after boundary: BrokerBoundary) -> Bool
}

/// A point between two things the broker carries out, where crash-anywhere may kill it.
public enum BrokerBoundary: String, Sendable, CaseIterable {
    case directive, send
}

extension BrokerIO {
    public func emitHintAccepted(_ target: HintTarget, hint: HintRef, notice: NoticeFields) {
        emitHintEvent(.hintAccepted(target, hint: hint, notice: notice, resync: false))
    }
    public func bundleRoute(_ peer: [UInt8]) -> (connection: [UInt8], device: [UInt8])? { nil }
    public func sendHints(on connection: [UInt8], _ hints: [(device: [UInt8], body: [UInt8])]) -> [SendFailure?] {
        hints.map { _ in .unreachable }
    }
    public func tickRequested(at: Double) {}
    public func dies(after boundary: BrokerBoundary) -> Bool { false }
}

/// The broker's logic between its instance and its machine, the same for the real process and the simulation: it
/// hands the instance each message and carries out the directives it returns in order; a send's outcome goes back
/// to the instance before the next directive.
public final class BrokerDriver {
    public let configuration: BrokerConfiguration
    unowned let io: BrokerIO
    public internal(set) var instance: BrokerInstance
    /// The earliest simulated second the instance asked to be ticked at.
    public internal(set) var wakeAt: Double?
    /// Set by the control command `stop`.
    public internal(set) var stopping = false
    /// Set when the process died in the middle of a message (the simulation): it carries out nothing more.
    public var killed: Bool { mortality.killed }
    /// Events were written that a send must not overtake.
    var flushBeforeSend = false
    /// Reused for every hint body.
    var hintBody: [UInt8] = []
    /// `hintCarriesData`, as the instance was started with: read without an access to `instance` for every hint.
    let carriesData: Bool
    /// Where this process dies (`--crash-at`, control `crashAt`).
    var mortality: Mortality
    /// Bounds the `request.refused` lines a flood can write (per peer and in all).
    public internal(set) var refusals = RefusalLimiter()
    /// Hints to the devices of pool connections held until the directives that made them are carried out (or
    /// something else must leave first), then sent as one bundle a connection; and the slots of their devices.
    var heldHints: [HeldHint] = []
    var heldSlots: Set<Int> = []
    /// How often a pool connection got more than one hint at once, and those hints (`process.stopped`'s
    /// `hintBundles`).
    public internal(set) var hintBundles = 0
    public internal(set) var hintsBundled = 0

    /// A hint on its way to a pool connection, with what its outcome needs.
    struct HeldHint {
        let connection: [UInt8]
        let target: HintTarget
        let hint: HintRef
        let copy: DeliveryCopy
        let device: [UInt8]
        let body: [UInt8]
    }

    public init(_ configuration: BrokerConfiguration, directory: AccountDirectory, io: BrokerIO) {
        self.configuration = configuration
        self.io = io
        mortality = Mortality(armed: configuration.process.crashAt)
        carriesData = configuration.settings.hintCarriesData
        instance = BrokerInstance(directory: directory, settings: configuration.settings,
                                  seed: configuration.process.seed)
    }

    /// `process.started` and, with chaos from the flags, `fault.set`: `listen`, `notices` and `control` as bound.
    public func started(pid: Int, listen: String, notices: String, control: String?) {
        let profiles = configuration.settings.profiles
        io.emit(.processStarted, [
            ("role", "broker"), ("pid", .int(pid)), ("listen", .string(listen)),
            ("notices", .string(notices)),
            ("noticesMode", .string(configuration.settings.noticesMode.rawValue)),
            ("control", control.map { .string($0) } ?? .null),
            ("seed", .string(String(configuration.process.seed))),
            ("timeScale", .double(configuration.process.timeScale)),
            ("profiles", .object([
                ("android", .string(profiles.android.rawValue)), ("ios", .string(profiles.ios.rawValue)),
                ("web", .string(profiles.web.rawValue)),
            ])),
        ])
        if !configuration.settings.chaos.isOff {
            io.emit(.faultSet, [("scope", "global"), ("source", "flags")] + configuration.settings.chaos.fields)
        }
    }

    /// The fields of `process.stopped` (`hintBundles` once a pool got hints in bundles).
    public func stopped(pid: Int) -> [(String, JSONValue)] {
        let bundles: [(String, JSONValue)] = hintBundles == 0 ? [] : [
            ("hintBundles", .object([("bundles", .int(hintBundles)), ("bundled", .int(hintsBundled))])),
        ]
        return [("role", "broker"), ("pid", .int(pid)), ("hints", .object(instance.counters.fields))] + bundles
            + [("refusalsSuppressed", .int(refusals.suppressedTotal))]
    }

    // MARK: - Messages

    public func onNoticeFrames(_ frames: [[UInt8]], now: Double) {
        run(instance.onNoticeMessage(frames, now: now))
    }

    public func onDeviceFrames(_ frames: [[UInt8]], peer: [UInt8], now: Double, user: String? = nil,
                               connection: Int32 = -1) {
        instance.realNanos = io.nanos
        run(instance.onDeviceMessage(frames, peer: peer, now: now, user: user, connection: connection))
    }

    public func onControlFrames(_ frames: [[UInt8]], peer: [UInt8], now: Double) {
        guard !killed else { return }
        run(instance.onControlMessage(frames, peer: peer, now: now))
    }

    /// Runs the instance's tick when `wakeAt` has come; false when it has not.
    @discardableResult
    public func tickIfDue(now: Double) -> Bool {
        guard let wake = wakeAt, wake <= now else { return false }
        wakeAt = nil
        run(instance.onTick(now: now))
        return true
    }

    public func onConnectionEnded(_ connection: Int32) { instance.onConnectionEnded(connection) }

    /// A refusal the shell saw itself (a key the ZAP handler refused), limited like the instance's.
    public func refused(_ fields: [(String, JSONValue)]) {
        run([.log(EventLine(.requestRefused, fields))])
    }

    /// The batch of messages ended: what the events hold may wait for the next send or the end of the batch.
    public func batchEnded() { flushBeforeSend = false }

    // MARK: - Directives

    func run(_ directives: [BrokerDirective]) {
        guard !killed else { return }
        do {
            try carryOut(directives)
        } catch {
            mortality.markKilled()
        }
    }

    /// Interprets directives in order; a send's outcome goes back to the instance before the next directive.
    /// `outcome`: these report a send that already happened, so their events need not reach the file before the next
    /// send (it is not their effect); the end of the batch or the next flush writes them.
    func carryOut(_ directives: [BrokerDirective], outcome: Bool = false) throws {
        // One strong reference for the whole list, not one per use of the unowned `io`.
        let io = self.io
        // By index: each directive is lent to `carryOut`, not copied out of the list (its references retained and
        // released once more for every directive).
        for index in directives.indices {
            try carryOut(directives[index], io: io, outcome: outcome)
        }
        try sendHeldHints(io)
    }

    /// One directive of a list, then the boundary after it (crash-anywhere's kill point).
    private func carryOut(_ directive: BrokerDirective, io: BrokerIO, outcome: Bool) throws {
        try mortality.alive()
        switch directive {
        case let .deliver(target, peer, hint, copy):
            try deliver(hint, to: target, peer: peer, copy: copy, io)
        case let .fanOut(fanOut):
            try carryOut(fanOut, io: io, outcome: outcome)
        case let .reply(socket, peer, message):
            try sendHeldHints(io)
            flushIfNeeded(io)
            io.reply(on: socket, to: peer, [peer] + Codec.encode(message))
        case let .scheduleTick(at):
            let earlier = wakeAt.map { at < $0 } ?? true
            wakeAt = min(wakeAt ?? at, at)
            if earlier { io.tickRequested(at: at) }
        case let .log(line):
            if line.type == EventCatalogue.requestRefused {
                let peer = line["peer"]?.stringValue ?? ""
                let (write, suppressed) = refusals.admit(peer: peer, nanos: io.nanos)
                guard write else { return }
                io.emit(line.type, suppressed > 0 ? line.fields + [("suppressed", .int(suppressed))] : line.fields)
            } else {
                io.emit(line.type, line.fields)
            }
            if !outcome { flushBeforeSend = true }
        case .hintAccepted:
            io.emitHintEvent(directive)
            try accepted(io, outcome: outcome)
        case .hintDelivered:
            io.emitHintEvent(directive)
            if !outcome { flushBeforeSend = true }
        case let .armCrash(control, peer):
            try sendHeldHints(io)
            // The crash points are the driver's (it does the killing); the instance answers.
            let answer: (ok: Bool, detail: String)
            do {
                answer = (true, try mortality.crashPoints.control(control.args, role: "broker"))
            } catch {
                answer = (false, "\(error)")
            }
            try carryOut(instance.onCrashArmed(ok: answer.ok, detail: answer.detail, control: control, peer: peer))
        case .stop:
            try sendHeldHints(io)
            stopping = true
        }
        try boundary(.directive, io)
    }

    /// A fan-out's directives, each carried out as it would be in the list, with the boundary after it (the last
    /// one's is the caller's, as for any directive).
    private func carryOut(_ fanOut: FanOut, io: BrokerIO, outcome: Bool) throws {
        let count = fanOut.targets.count
        for index in 0..<count {
            if index > 0 { try nextDirective(io) }
            io.emitHintAccepted(fanOut.targets[index], hint: fanOut.hint(index), notice: fanOut.notice)
            try accepted(io, outcome: outcome)
        }
        for index in 0..<count {
            try nextDirective(io)
            try deliver(fanOut.hint(index), to: fanOut.targets[index], peer: fanOut.peers[index], copy: .original, io)
        }
    }

    /// The boundary after one directive and the check before the next, for the directives a fan-out stands for.
    private func nextDirective(_ io: BrokerIO) throws {
        try boundary(.directive, io)
        try mortality.alive()
    }

    /// After a hint's `hint.accepted` line: a send must not overtake it; the crash point between it and the send.
    private func accepted(_ io: BrokerIO, outcome: Bool) throws {
        if !outcome { flushBeforeSend = true }
        try reach(.brokerAfterAcceptBeforeDeliver, io)
    }

    /// Sends `hint` to `target` at `peer` (held for a bundle when the device is on a pool's connection) and carries
    /// out its outcome, then the crash point and boundary of a sent hint.
    private func deliver(_ hint: HintRef, to target: HintTarget, peer: [UInt8], copy: DeliveryCopy,
                         _ io: BrokerIO) throws {
        target.writeBody(of: hint, into: &hintBody)
        if carriesData, let data = instance.hintData[hint.id] {
            // `hintCarriesData`: the body's last `}` becomes `,"changes":[…]}`.
            hintBody.removeLast()
            hintBody += Array(",\"changes\":\(data.description)}".utf8)
        }
        if let route = io.bundleRoute(peer) {
            // A bundle holds one hint a device: the pool reads at most one entry per device it hosts.
            if heldSlots.contains(target.slot) { try sendHeldHints(io) }
            heldSlots.insert(target.slot)
            heldHints.append(HeldHint(connection: route.connection, target: target, hint: hint, copy: copy,
                                      device: route.device, body: hintBody))
            return
        }
        try sendHeldHints(io)
        flushIfNeeded(io)
        let failure = io.sendHint(to: peer, body: hintBody)
        // The outcome is carried out as a list of one would be: its own boundary after it.
        if let outcome = instance.sent(target, hint: hint, copy: copy, failure: failure, now: io.nowSim) {
            try carryOut(outcome, io: io, outcome: true)
        }
        if failure == nil {
            try reach(.brokerAfterDeliver, io)
            try boundary(.send, io)
        }
    }

    /// Sends the held hints to their pool connections in bundles, then gives each hint's outcome to the instance and
    /// carries it out, each with the crash point and boundary that follow a sent hint, as for a hint sent alone: its
    /// `hint.accepted` line was written before it left, its `hint.delivered` (or `hint.dropped`) says what libzmq
    /// did with the message that carried it.
    func sendHeldHints(_ io: BrokerIO) throws {
        guard !heldHints.isEmpty else { return }
        let all = heldHints
        heldHints.removeAll(keepingCapacity: true)
        heldSlots.removeAll(keepingCapacity: true)
        flushIfNeeded(io)
        // One group a connection, in the order the connections first came; each keeps its hints' order.
        var groups: [[HeldHint]] = []
        var groupOf: [[UInt8]: Int] = [:]
        for item in all {
            if let index = groupOf[item.connection] {
                groups[index].append(item)
            } else {
                groupOf[item.connection] = groups.count
                groups.append([item])
            }
        }
        for held in groups { try send(held, io) }
    }

    /// Sends one connection's held hints and carries out each one's outcome.
    private func send(_ held: [HeldHint], _ io: BrokerIO) throws {
        let failures = io.sendHints(on: held[0].connection, held.map { ($0.device, $0.body) })
        if held.count > 1 {
            hintBundles += 1
            hintsBundled += held.count
        }
        for (item, failure) in zip(held, failures) {
            if let outcome = instance.sent(item.target, hint: item.hint, copy: item.copy, failure: failure,
                                           now: io.nowSim) {
                try carryOut(outcome, io: io, outcome: true)
            }
            if failure == nil {
                try reach(.brokerAfterDeliver, io)
                try boundary(.send, io)
            }
        }
    }

    /// `io`: the caller's strong reference, so the unowned one is not taken again for every step of a hint.
    func flushIfNeeded(_ io: BrokerIO) {
        guard flushBeforeSend else { return }
        io.flushEvents()
        flushBeforeSend = false
    }

    /// Counts one occurrence of `point`; dies there when it is the armed one.
    func reach(_ point: CrashPoint, _ io: BrokerIO, work: Int = 1) throws {
        guard let nth = mortality.fires(point, work: work) else { return }
        io.die(at: point, nth: nth, work: work)
        try mortality.die()
    }

    func boundary(_ kind: BrokerBoundary, _ io: BrokerIO) throws {
        guard io.dies(after: kind) else { return }
        try mortality.die()
    }
}
