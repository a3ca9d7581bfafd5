import LabKit
import SyncProtocol

/// The lab's half of an outside device (docs/DEVICE-CONTRACT.md): the platform model, the broker link and the user's
/// actions stay here, so iOS and Android limits apply to a student's program as to the lab's own device; the program
/// owns its server connection, its SQLite file, its outbox and its pass, and runs a pass only when told. Pure: it is
/// handed `now` and a seeded generator, and says what its shell must do in `ProgramDirective`s.
public struct ProgramInstance: Sendable {
    /// What a request to the program waits for.
    enum Waiting: Sendable {
        case edit(PendingControl)
        case pass(id: Int)
        case status(PendingControl)
        case network
    }

    /// The pass the program is running.
    struct Pass: Sendable {
        var id: Int
        var trigger: Trigger
        var started: Double
        var syncs: [PendingControl]
        /// The platform's execution limit (seconds of execution) and when it runs out (simulated); nil: no limit.
        var limit: Double? = nil
        var deadline: Double? = nil
        /// Set when `expire` was sent: the program is killed if the pass has not ended by then.
        var killAt: Double? = nil
    }

    public let identity: DeviceIdentity
    let settings: DeviceSettings
    /// How long the program may take to answer anything, in simulated seconds.
    let answerWithinSim: Double
    public internal(set) var environment: DeviceEnvironment
    var scheduler: any PlatformScheduler
    var rng: SeededGenerator
    var now = 0.0
    var registered = false
    var registerRetryAt: Double?
    var reportedState: DeviceState?
    var pass: Pass?
    /// The one follow-up pass coalesced triggers make (unique work, KEEP), with the `sync` requests that joined it.
    var followUp: (trigger: Trigger, syncs: [PendingControl], force: Bool)?
    var nextPassID = 1
    var nextReq = 1
    var waiting: [Int: (what: Waiting, deadline: Double)] = [:]
    /// What the program last said of its durable state.
    public internal(set) var cursor = 0
    public internal(set) var head = 0
    public internal(set) var pending = 0
    var lastSuccess: Double?
    var scheduledRuns: [Double] = []
    /// Set once the contract is broken: nothing more is sent to the program.
    public internal(set) var failed = false

    public init(identity: DeviceIdentity, settings: DeviceSettings, brokerEnabled: Bool, answerWithinMs: Int,
                rng: SeededGenerator) {
        self.identity = identity
        self.settings = settings
        answerWithinSim = Double(answerWithinMs) / 1000 * settings.timeScale
        let app: AppState = switch settings.startState {
        case .foreground: .foreground
        case .background: .background
        case .closed: .closed
        }
        environment = DeviceEnvironment(app: app, online: true, charging: settings.charging,
                                        opensPerDay: settings.opensPerDay, refreshOn: true,
                                        screenOn: settings.screenOn)
        scheduler = makeScheduler(identity.platform, environment: environment, settings: settings)
        registerRetryAt = brokerEnabled ? 0 : nil
        self.rng = rng
    }

    /// The next simulated second at which `onTick` has something to do.
    public var nextWake: Double? {
        ([scheduler.nextWake, registerRetryAt, pass?.killAt ?? pass?.deadline]
            + waiting.values.map { Optional($0.deadline) }).compactMap { $0 }.min()
    }

    // MARK: - Lifetime

    /// The program said `ready` with its durable cursor: register the job, register with the broker, and run a
    /// `foreground` pass when the app starts in the foreground.
    public mutating func start(ready: JSONValue, now: Double) -> [ProgramDirective] {
        self.now = now
        cursor = ready["cursor"]?.intValue ?? 0
        head = max(cursor, ready["head"]?.intValue ?? 0)
        pending = ready["pending"]?.intValue ?? 0
        var out: [ProgramDirective] = []
        if environment.app != .forceQuit { out += registerJob() }
        out += brokerTick(now: now)
        if environment.isForeground { out += trigger(.foreground, now: now) }
        return finishing(out)
    }

    public mutating func onTick(now: Double) -> [ProgramDirective] {
        self.now = max(self.now, now)
        let limited = passLimits(now: now)
        if !limited.isEmpty { return finishing(limited) }
        if let (req, entry) = waiting.first(where: { $0.value.deadline <= now }) {
            let seconds = answerWithinSim / max(settings.timeScale, 1e-9)
            return fail("no answer to request \(req) (\(entry.what.name)) within \(Self.format(seconds)) s")
        }
        var out = brokerTick(now: now)
        out += schedulerOutput(scheduler.tick(now: now, rng: &rng))
        return finishing(out)
    }

    /// The contract is broken: the shell writes `program.failed`, stops the program and exits 3.
    mutating func fail(_ reason: String) -> [ProgramDirective] {
        guard !failed else { return [] }
        failed = true
        // Whoever waits on the program is answered now, not left to time out.
        var waiters = waiting.values.compactMap { entry -> PendingControl? in
            switch entry.what {
            case .edit(let pending), .status(let pending): pending
            case .pass, .network: nil
            }
        }
        waiters += (pass?.syncs ?? []) + (followUp?.syncs ?? [])
        waiting = [:]
        return waiters.flatMap { answer($0, .refused("the outside program broke the device contract: \(reason)")) }
            + [.fail(reason)]
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }

    // MARK: - Broker

    mutating func brokerTick(now: Double) -> [ProgramDirective] {
        guard let retryAt = registerRetryAt, now >= retryAt else { return [] }
        registerRetryAt = now + max(settings.replyTimeoutSim, 0.001) * 10
        return [.toBroker(.register(Register(device: identity.device, account: identity.account,
                                             platform: identity.platform, token: identity.token)))]
    }

    /// A decoded broker message, with the sorted keys of its raw body (the hints-are-references check reads them).
    public mutating func onBrokerMessage(_ message: Message, keys: [String], now: Double) -> [ProgramDirective] {
        self.now = max(self.now, now)
        var out: [ProgramDirective] = []
        switch message {
        case .registered:
            registered = true
            registerRetryAt = nil
            reportedState = nil
            out.append(.log(EventLine(.brokerRegistered, [])))
        case .hint(let hint):
            out.append(.log(EventLine(.hintReceived, [
                ("hint", .string(hint.hint)), ("head", .int(hint.head)), ("keys", .array(keys.map { .string($0) })),
            ])))
            head = max(head, hint.head)
            if case .refuse(let reason) = scheduler.admission(for: .push) {
                out.append(.log(EventLine(.hintIgnored, [("hint", .string(hint.hint)), ("reason", .string(reason))])))
            } else {
                out += trigger(.push, now: now)
            }
        case .error(let error):
            out.append(.log(EventLine(.brokerError, [("code", .string(error.code.rawValue)),
                                                     ("message", .string(error.message))])))
            registered = false
            registerRetryAt = now + max(settings.replyTimeoutSim, 0.001) * 10
        default:
            out.append(.log(EventLine(.messageUnexpected, [("from", "broker"), ("type", .string(message.type))])))
        }
        return finishing(out)
    }

    public mutating func onBrokerGarbage(_ error: ProtocolError, keys: [String], now: Double) -> [ProgramDirective] {
        [.log(EventLine(.hintMalformed, [("reason", .string("\(error)")), ("keys", .array(keys.map { .string($0) }))]))]
    }

    /// What the OS would tell its push service; sent whenever it changes, once registered.
    mutating func finishing(_ out: [ProgramDirective]) -> [ProgramDirective] {
        guard registered else { return out }
        let state = DeviceState(device: identity.device, online: environment.online, app: environment.app,
                                doze: scheduler.dozing, refreshOff: !environment.refreshOn)
        guard state != reportedState else { return out }
        reportedState = state
        return out + [.toBroker(.deviceState(state))]
    }

    // MARK: - Triggers and passes

    /// The app registers its sync job; what registering returns (`guarantee`) is measured from this life's runs.
    mutating func registerJob() -> [ProgramDirective] {
        let output = scheduler.register(now: now, rng: &rng)
        return output.events.map { .log($0) } + [reportGuarantee()]
            + output.grants.flatMap { trigger($0, now: now, granted: true) }
    }

    func reportGuarantee() -> ProgramDirective {
        .log(EventLine(.guarantee, DeviceInstance.fields(of: scheduler.guarantee(scheduledRuns: scheduledRuns))
            + [("requestedSec", .double(settings.desiredIntervalSec))]))
    }

    mutating func schedulerOutput(_ output: SchedulerOutput) -> [ProgramDirective] {
        output.events.map { .log($0) } + output.grants.flatMap { trigger($0, now: now, granted: true) }
    }

    /// A reason to run a pass: admitted by the platform model (a grant is admitted already), coalesced into the one
    /// follow-up while a pass runs, else started.
    mutating func trigger(_ trigger: Trigger, now: Double, granted: Bool = false, sync: PendingControl? = nil,
                          force: Bool = false) -> [ProgramDirective] {
        guard !failed else { return [] }
        if !granted && trigger != .manual && trigger != .push,
           case .refuse(let reason) = scheduler.admission(for: trigger)
        {
            return [.log(EventLine(.triggerRefused, [("trigger", .string(trigger.rawValue)),
                                                     ("reason", .string(reason))]))]
        }
        if pass != nil {
            var next = followUp ?? (trigger, [], false)
            if let sync { next.syncs.append(sync) }
            next.force = next.force || force
            followUp = next
            return [.log(EventLine(.trigger, [("trigger", .string(trigger.rawValue)), ("coalesced", true)]))]
        }
        return [.log(EventLine(.trigger, [("trigger", .string(trigger.rawValue)), ("coalesced", false)]))]
            + startPass(trigger, syncs: sync.map { [$0] } ?? [], force: force)
    }

    mutating func startPass(_ trigger: Trigger, syncs: [PendingControl], force: Bool) -> [ProgramDirective] {
        let id = nextPassID
        nextPassID += 1
        var started = Pass(id: id, trigger: trigger, started: now, syncs: syncs)
        // The platform's execution limit, as the lab's own device gets it (DeviceInstance.trigger): none for a
        // manual or forced pass, nor in the foreground.
        if trigger != .manual && !force, case .run(let limit?) = scheduler.admission(for: trigger) {
            started.limit = limit
            started.deadline = now + limit * settings.executionScale
        }
        pass = started
        if Trigger.scheduled.contains(trigger) { scheduledRuns.append(now) }
        var fields: [(String, JSONValue)] = [("pass", .int(id)), ("trigger", .string(trigger.rawValue))]
        if let limit = started.limit { fields.append(("limitSec", .double(limit))) }
        // A pass under a limit is bounded by it (expire, then the kill after the grace), not by programTimeoutMs.
        let answerBy = started.deadline.map { $0 + expireGraceSim + answerWithinSim }
        return [.log(EventLine(.passStart, fields))]
            + ask(.pass(id: id), [("type", "pass"), ("pass", .int(id)), ("trigger", .string(trigger.rawValue)),
                                      ("head", .int(head)), ("force", .bool(force))], answerBy: answerBy)
    }

    /// A line to the program with the next `req`, remembered until its reply.
    mutating func ask(_ what: Waiting, _ fields: [(String, JSONValue)], answerBy: Double? = nil)
        -> [ProgramDirective]
    {
        guard !failed else { return [] }
        let req = nextRequest()
        waiting[req] = (what, answerBy ?? now + answerWithinSim)
        return [.toProgram(.object([("req", .int(req))] + fields))]
    }
}

extension ProgramInstance.Waiting {
    var name: String {
        switch self {
        case .edit: "edit"
        case .pass(let id): "pass \(id)"
        case .status: "status"
        case .network: "network"
        }
    }
}
