import LabKit
import SQLite
import SyncDevice
import SyncProtocol

/// `DeviceShell`'s twin on the simulated machine: the same `DeviceInstance` and `Ledger` (a real SQLite file), each
/// step's ledger writes one transaction committed before anything the step sends leaves and at the step's end, the
/// directives carried out in the same order with the same events; sockets are `SimWorld`'s links and the poll
/// timeout is a timer on its clock. Keep it in step with `DeviceShell.drive` and `DeviceShell.perform`.
public final class SimDeviceShell {
    public let configuration: DeviceConfiguration
    unowned let world: SimWorld
    let incarnation: Int
    let ledger: Ledger
    var instance: DeviceInstance
    public let pid: Int
    let brokerEnabled: Bool
    /// `sync` requests waiting for their pass to end, by token: the control req to answer.
    var syncWaiters: [Int: Int] = [:]
    var nextToken = 1
    var stopping = false
    var driveDepth = 0
    var recoveringCommit = false
    /// The virtual µs of the one wake-up timer this device has set, if any.
    private var wakeScheduled: Int64?

    /// Opens the ledger as `DeviceShell.init` does; `generator` makes the ledger's lease owner and install id.
    public init(_ configuration: DeviceConfiguration, world: SimWorld, generator: SeededGenerator) throws {
        self.configuration = configuration
        self.world = world
        ledger = try Ledger(path: configuration.databasePath, synchronous: configuration.synchronous,
                            generator: generator)
        let restored = try ledger.prepare(identity: configuration.identity, clock: configuration.clock,
                                          settings: configuration.settings, now: world.simNow)
        brokerEnabled = configuration.brokerEndpoint != nil
        instance = DeviceInstance(identity: configuration.identity, settings: configuration.settings,
                                  restored: restored, brokerEnabled: brokerEnabled,
                                  rng: SeededGenerator.derived(seed: configuration.seed,
                                                               name: configuration.identity.device))
        incarnation = world.born(configuration.name)
        pid = world.pid()
    }

    public var name: String { configuration.name }
    var now: Double { world.simNow }
    var wall: Int64 { world.clock.epochMicros + world.scheduler.now }

    func emit(_ type: String, _ fields: [(String, JSONValue)] = []) { world.log.emit(name, type, fields) }

    /// Writes `process.started` and starts the instance.
    func begin() {
        emit("process.started", [
            ("role", "device"), ("pid", .int(pid)), ("device", .string(configuration.identity.device)),
            ("platform", .string(configuration.identity.platform.rawValue)), ("cursor", .int(instance.cursor)),
        ])
        drive { $0.start(now: now) }
    }

    /// Killed: pending answers and timers die with the process.
    func abandon() {
        syncWaiters.removeAll()
        if ledger.database.inGroup { _ = try? ledger.database.commitGroup() }
    }

    func tick() {
        guard !stopping else { return }
        drive { $0.onTick(now: now) }
    }

    /// Releases what is in flight and writes `process.stopped` (a clean stop).
    func finish() {
        drive { $0.onStop(now: now) }
        emit("process.stopped", [("role", "device"), ("pid", .int(pid))])
        world.exited(name)
    }

    /// After every step: the poll timeout, as a timer at the instance's next wake (at least 1 ms of real time when
    /// that is already due, as `DeviceShell.pollTimeoutMs` waits).
    private func scheduleWake() {
        guard !stopping, let wake = instance.nextWake else { return }
        var time = world.micros(atSim: wake)
        if time <= world.scheduler.now { time = world.scheduler.now + 1_000 }
        if let scheduled = wakeScheduled, scheduled > world.scheduler.now, scheduled <= time { return }
        wakeScheduled = time
        world.timer(name, incarnation: incarnation, at: time) { [unowned self] in
            if self.wakeScheduled == time { self.wakeScheduled = nil }
            self.tick()
        }
    }

    // MARK: - Directives

    struct LedgerFailure: Error {
        let message: String
    }

    func drive(_ step: (inout DeviceInstance) -> [DeviceDirective]) {
        driveDepth += 1
        defer {
            driveDepth -= 1
            if driveDepth == 0 {
                _ = commitLedger()
                scheduleWake()
            }
        }
        let directives = step(&instance)
        do {
            try perform(directives)
        } catch {
            let message = (error as? LedgerFailure)?.message ?? "\(error)"
            let cursor = (try? ledger.cursor()) ?? instance.cursor
            let recovery = instance.onLedgerFailure(message, cursor: cursor, now: now)
            do { try perform(recovery) } catch { emit("ledger.error", [("message", .string("\(error)"))]) }
        }
    }

    func perform(_ directives: [DeviceDirective]) throws {
        for directive in directives {
            switch directive {
            case .sendToServer(let message):
                send(message, to: "server")
            case .sendToBroker(let message):
                if brokerEnabled { send(message, to: "broker") }
            case .beginPass(let id, let trigger, let at):
                try ledgerStep { try ledger.beginPass(id: id, trigger: trigger, at: at) }
            case .claim(let request):
                let result = try ledgerStep { try ledger.claim(request) }
                try perform(instance.onClaimed(result, now: now))
            case .recordOutcomes(let outcomes, _):
                try ledgerStep { try ledger.record(outcomes, wall: wall) }
            case .applyPage(let page):
                let settled = try ledgerStep { try ledger.apply(page, wall: wall) }
                for key in settled {
                    emit("op.confirmed", [("key", .string(key)), ("via", "pull"), ("pass", .int(page.pass))])
                }
            case .commitCursor(let seq, _):
                // `cursorCommit: beforePage`: the cursor's own commit, before its page is applied.
                try ledgerStep { try ledger.commitCursor(to: seq) }
                guard commitLedger() else { throw LedgerFailure(message: "the cursor's commit failed") }
            case .dropQueue(let reason):
                let keys = try ledgerStep { try ledger.dropQueue() }
                if !keys.isEmpty {
                    let line = DeviceInstance.queueLost(keys, reason: reason)
                    emit(line.type, line.fields)
                }
            case .endPass(let record):
                try ledgerStep { try ledger.endPass(record) }
            case .recordAppOpen(let at, let dataAge):
                try ledgerStep { try ledger.recordAppOpen(at: at, dataAge: dataAge) }
            case .answerSync(let tokens):
                for token in tokens {
                    guard let req = syncWaiters.removeValue(forKey: token) else { continue }
                    reply(.controlAck(ControlAck(req: req, ok: true, detail: "pass ended", data: statusData())))
                }
            case .log(let line):
                emit(line.type, line.fields)
                if line.type == "guarantee" { try? ledger.recordGuarantee(line) }
            }
        }
    }

    func ledgerStep<T>(_ body: () throws -> T) throws -> T {
        do {
            if driveDepth > 0 && !ledger.database.inGroup { try ledger.database.beginGroup() }
            return try body()
        } catch {
            throw LedgerFailure(message: "\(error)")
        }
    }

    func commitLedger() -> Bool {
        guard ledger.database.inGroup else { return true }
        do {
            try ledger.database.commitGroup()
            return true
        } catch {
            let message = "commit failed: \(error)"
            emit("ledger.error", [("message", .string(message))])
            guard !recoveringCommit else { return false }
            recoveringCommit = true
            defer { recoveringCommit = false }
            let cursor = (try? ledger.cursor()) ?? instance.cursor
            let recovery = instance.onLedgerFailure(message, cursor: cursor, now: now)
            do { try perform(recovery) } catch { emit("ledger.error", [("message", .string("\(error)"))]) }
            _ = try? ledger.database.commitGroup()
            return false
        }
    }

    /// A DEALER send never blocks here: with its peer down the message waits in the connection, as libzmq's does.
    func send(_ message: Message, to peer: String) {
        guard commitLedger() else {
            emit("send.failed", [("to", .string(peer)), ("type", .string(message.type)),
                                 ("reason", "the ledger could not commit what it depends on")])
            return
        }
        if peer == "server" {
            world.toServer(from: name, incarnation: incarnation, frames: Codec.encode(message))
        } else {
            world.toBroker(from: name, incarnation: incarnation, frames: Codec.encode(message))
        }
    }

    // MARK: - Server and broker

    func onServerFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        switch Codec.decodeOrReply(frames) {
        case .success(let message): drive { $0.onServerMessage(message, now: now) }
        case .failure(let error): drive { $0.onServerGarbage(error, now: now) }
        }
        tick()
    }

    func onBrokerFrames(_ frames: [[UInt8]]) {
        guard !stopping else { return }
        let keys = DeviceShell.bodyKeys(frames)
        switch Codec.decodeOrReply(frames) {
        case .success(let message): drive { $0.onBrokerMessage(message, keys: keys, now: now) }
        case .failure(let error): drive { $0.onBrokerGarbage(error, keys: keys, now: now) }
        }
        tick()
    }

    func reply(_ message: Message) {
        guard commitLedger() else { return }
        world.toLauncher(from: name, frames: Codec.encode(message))
    }
}
