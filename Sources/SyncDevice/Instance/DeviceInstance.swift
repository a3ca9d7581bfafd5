import LabKit
import SyncProtocol

/// The device's logic: triggers, the pass as a state machine, the app's lifecycle, the broker link. A pure value
/// (STYLE.md): it is handed simulated `now` and owns a seeded generator; each `on…` returns directives for the shell,
/// which does the IO. Correctness does not depend on which trigger ran a pass (seed 001).
public struct DeviceInstance: Sendable {
    public let identity: DeviceIdentity
    public let settings: DeviceSettings
    public internal(set) var scheduler: any PlatformScheduler
    public internal(set) var environment: DeviceEnvironment
    /// The highest change seq durably applied (mirrors the ledger's).
    public internal(set) var cursor: Int
    /// The highest head seen (welcome, page or hint).
    public internal(set) var head: Int
    /// Whether the server has accepted our hello on this connection.
    public internal(set) var sessionReady = false
    public internal(set) var brokerLink: BrokerLink
    public internal(set) var pass: RunningPass?
    /// The one pass that will follow the running one (unique work, KEEP).
    public internal(set) var followUp: FollowUp?
    /// `coalesce` off: the passes triggers queued while a pass ran (or, on Android, while offline), each to run in
    /// full, one after another.
    public internal(set) var queuedPasses: [FollowUp] = []
    /// `opQueue: memory`: the ops the last restart lost, reported at start.
    var lostAtRestart: [String]
    public internal(set) var successTimes: [Double]
    /// When the platform's scheduler ran the job (the guarantee's measured gaps).
    public internal(set) var scheduledRuns: [Double]
    var rng: SeededGenerator
    var nextPassID: Int
    var nextReq = 1
    var reportedState: DeviceState?
    var now: Double = 0

    public init(identity: DeviceIdentity, settings: DeviceSettings, restored: RestoredState = RestoredState(),
                brokerEnabled: Bool = true, rng: SeededGenerator) {
        self.identity = identity
        self.settings = settings
        let app: AppState
        switch settings.startState {
        case .foreground: app = .foreground
        case .background: app = .background
        case .closed: app = .closed
        }
        let environment = DeviceEnvironment(app: app, online: true, charging: settings.charging,
                                            opensPerDay: settings.opensPerDay,
                                            refreshOn: settings.backgroundAppRefresh, screenOn: settings.screenOn)
        self.environment = environment
        self.scheduler = makeScheduler(identity.platform, environment: environment, settings: settings)
        self.lostAtRestart = restored.lostOps
        self.cursor = restored.cursor
        self.head = max(restored.head, restored.cursor)
        self.nextPassID = restored.nextPassID
        self.successTimes = restored.successTimes
        self.scheduledRuns = restored.scheduledRuns
        self.brokerLink = brokerEnabled ? .registering(retryAt: 0) : .disabled
        self.rng = rng
    }

    /// The last successful sync (simulated seconds), nil before any.
    public var lastSuccess: Double? { successTimes.last }
    public var passRunning: Bool { pass != nil }

    /// What registering the sync job returns now, from this device's own measured history.
    public var guarantee: Guarantee { scheduler.guarantee(scheduledRuns: scheduledRuns) }

    public func freshness(at now: Double) -> Freshness {
        Freshness.at(now, lastSuccessfulSync: lastSuccess, budget: settings.freshnessBudgetSec)
    }

    /// The next simulated second at which `onTick` has something to do.
    public var nextWake: Double? {
        // Read field by field, with no list built and no copy of the pass: the shell asks after every step.
        var earliest = scheduler.nextWake
        if pass != nil {
            earliest = earlier(earliest, pass?.deadline)
            earliest = earlier(earliest, pass?.pendingPage?.due)
            switch pass?.phase {
            case .hello(let deadline, _)?, .pushing(_, let deadline)?, .pulling(_, let deadline)?:
                earliest = earlier(earliest, deadline)
            case .claiming?, nil:
                break
            }
        }
        switch brokerLink {
        case .registering(let retryAt), .refused(_, let retryAt): earliest = earlier(earliest, retryAt)
        case .disabled, .registered: break
        }
        return earliest
    }

    // MARK: - Start and time

    /// The process started: the app registers its sync job, the device registers with the broker, and a device that
    /// starts in the foreground runs a launch pass.
    public mutating func start(now: Double) -> [DeviceDirective] {
        self.now = now
        var out: [DeviceDirective] = []
        if !lostAtRestart.isEmpty {
            out.append(.log(Self.queueLost(lostAtRestart, reason: "opQueue=memory: the process restarted")))
            lostAtRestart = []
        }
        if environment.app != .forceQuit {
            out += registerJob(now: now)
        }
        out += brokerTick(now: now)
        if environment.isForeground {
            out += trigger(.foreground, now: now)
        }
        return finishing(out)
    }

    /// Time passed: scheduler grants, reply timeouts, execution limits, broker retries.
    public mutating func onTick(now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        var out: [DeviceDirective] = []
        out += passTimeouts(now: now)
        let output = scheduler.tick(now: now, rng: &rng)
        out += output.events.map { .log($0) }
        for grant in output.grants {
            out += trigger(grant, now: now)
        }
        out += brokerTick(now: now)
        return finishing(out)
    }

    // MARK: - Triggers

    /// Runs a pass for `trigger` now, or coalesces it into the one follow-up pass when a pass is running.
    mutating func trigger(_ trigger: Trigger, now: Double, tokens: [Int] = [], force: Bool = false)
        -> [DeviceDirective]
    {
        let admission: Admission
        if trigger == .manual || force {
            admission = .run(limit: nil)
        } else if !environment.online {
            admission = .refuse("offline")
        } else if trigger == .foreground && !settings.foregroundPull {
            admission = .refuse("foregroundPull is off: the app does not sync when it comes to the foreground")
        } else {
            admission = scheduler.admission(for: trigger)
        }
        guard case .run(let limit) = admission else {
            if case .refuse(let reason) = admission {
                if !environment.online && !settings.coalesce && identity.platform == .android
                    && !Trigger.scheduled.contains(trigger)
                {
                    // `coalesce` off on Android: the trigger enqueues work of its own, which WorkManager holds until
                    // its network constraint is met; every one of them runs when the network comes back.
                    return enqueue(trigger, tokens: tokens, waiting: "offline: the work waits for the network")
                }
                return [.log(EventLine(.triggerRefused, [("trigger", .string(trigger.rawValue)),
                                                         ("reason", .string(reason))]))]
            }
            return []
        }
        if pass != nil && !settings.coalesce && trigger != .manual && !force {
            // The switch `coalesce` off (no unique work): this trigger queues a full pass of its own.
            return enqueue(trigger, tokens: tokens, waiting: "a pass is running")
        }
        if pass != nil {
            // Unique work, KEEP: the first queued follow-up stays; later triggers join it.
            var next = followUp ?? FollowUp(trigger: trigger, tokens: [], forced: false, ignoreBackoff: false)
            next.tokens += tokens
            next.forced = next.forced || trigger == .manual || force
            next.ignoreBackoff = next.ignoreBackoff || force
            followUp = next
            return [.event(.trigger(trigger, coalesced: true))]
        }
        return [.event(.trigger(trigger, coalesced: false))]
            + startPass(trigger, limit: limit, now: now, tokens: tokens, ignoreBackoff: force)
    }

    /// `coalesce` off: `trigger` queues a full pass of its own behind the others, in order (`trigger {queued}`).
    mutating func enqueue(_ trigger: Trigger, tokens: [Int], waiting: String) -> [DeviceDirective] {
        queuedPasses.append(FollowUp(trigger: trigger, tokens: tokens, forced: false, ignoreBackoff: false))
        return [.log(EventLine(.trigger, [("trigger", .string(trigger.rawValue)), ("coalesced", false),
                                         ("queued", .int(queuedPasses.count)), ("waiting", .string(waiting))]))]
    }

    // MARK: - Broker

    /// A message from the broker; `keys` are the JSON keys of the raw body frame.
    public mutating func onBrokerMessage(_ message: Message, keys: [String], now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        var out: [DeviceDirective] = []
        switch message {
        case .registered:
            if brokerLink != .registered {
                brokerLink = .registered
                reportedState = nil  // a (re-)registration is followed by the current state
                out.append(.log(EventLine(.brokerRegistered)))
            }
        case .hint(let hint):
            out.append(.event(.hintReceived(hint: hint.hint, head: hint.head, keys: keys)))
            out += onHint(hint, now: now)
        case .error(let error):
            out += onBrokerError(error, now: now)
        case .hello, .welcome, .push, .pushResult, .pull, .page, .notice, .register, .deviceState, .control,
             .controlAck:
            out.append(.log(EventLine(.messageUnexpected, [("from", "broker"), ("type", .string(message.type))])))
        }
        return finishing(out)
    }

    /// A frame from the broker that did not decode.
    public mutating func onBrokerGarbage(_ error: ProtocolError, keys: [String], now: Double) -> [DeviceDirective] {
        finishing([.log(EventLine(.hintMalformed, [("reason", .string(error.description)),
                                                   ("keys", .array(keys.map { .string($0) }))]))])
    }

    mutating func onHint(_ hint: Hint, now: Double) -> [DeviceDirective] {
        guard hint.account == identity.account else {
            return [.log(EventLine(.hintIgnored, [("hint", .string(hint.hint)),
                                                  ("reason", .string("hint for account \(hint.account)"))]))]
        }
        head = max(head, hint.head)
        // A hint is a reference: it only starts the pass, which pulls from the durable cursor.
        if !environment.online {
            return [.log(EventLine(.hintIgnored, [("hint", .string(hint.hint)), ("reason", "offline")]))]
        }
        if case .refuse(let reason) = scheduler.admission(for: .push) {
            return [.log(EventLine(.hintIgnored, [("hint", .string(hint.hint)), ("reason", .string(reason))]))]
        }
        return trigger(.push, now: now)
    }

    mutating func onBrokerError(_ error: ErrorReply, now: Double) -> [DeviceDirective] {
        let line = EventLine(.brokerError, [("code", .string(error.code.rawValue)),
                                            ("message", .string(error.message))])
        let forgotten = error.code == .notAuthenticated || (error.code == .unknownDevice && brokerLink == .registered)
        if forgotten {
            // The broker forgot us (it restarted): register again.
            brokerLink = .registering(retryAt: now)
            return [.log(line)] + brokerTick(now: now)
        }
        if [.unknownDevice, .badToken, .wrongAccount].contains(error.code) {
            brokerLink = .refused(error.message, retryAt: now + retryGap * 30)
        }
        return [.log(line)]
    }

    /// The `queue.lost` event: unsettled ops an in-memory queue lost with its process.
    public static func queueLost(_ keys: [String], reason: String) -> EventLine {
        EventLine(.queueLost, [("count", .int(keys.count)), ("keys", .array(keys.map { .string($0) })),
                               ("reason", .string(reason))])
    }

    /// Real-time-sized gap for retries, in simulated seconds.
    var retryGap: Double { max(settings.replyTimeoutSim, 0.001) }

    mutating func brokerTick(now: Double) -> [DeviceDirective] {
        switch brokerLink {
        case .registering(let retryAt), .refused(_, let retryAt):
            guard now >= retryAt else { return [] }
            // `register` carries no req: keep at most one in flight (PROTOCOL.md §1), so retry only after a long
            // silence (a broker that was down has the queued one by then).
            brokerLink = .registering(retryAt: now + retryGap * 10)
            let register = Register(device: identity.device, account: identity.account, platform: identity.platform,
                                    token: identity.token)
            return [.sendToBroker(.register(register))]
        case .disabled, .registered:
            return []
        }
    }

    /// What the OS would tell its push service about this device now.
    public var deviceState: DeviceState {
        DeviceState(device: identity.device, online: environment.online, app: environment.app,
                    doze: scheduler.dozing, refreshOff: !environment.refreshOn)
    }

    /// Appends a `deviceState` for the broker whenever what it would say changed.
    mutating func finishing(_ out: [DeviceDirective]) -> [DeviceDirective] {
        guard brokerLink == .registered else { return out }
        let state = deviceState
        guard state != reportedState else { return out }
        reportedState = state
        return out + [.sendToBroker(.deviceState(state))]
    }

    // MARK: - Scheduling

    mutating func registerJob(now: Double) -> [DeviceDirective] {
        var out: [DeviceDirective] = []
        if identity.platform == .ios && !settings.backgroundAppRefresh && !environment.refreshOn {
            // The user's setting, said at each launch it holds for, so the report can tell why nothing is granted.
            out.append(.log(EventLine(.refreshSet, [
                ("on", .bool(false)),
                ("reason", "backgroundAppRefresh=false: the user switched Background App Refresh off"),
            ])))
        }
        let output = scheduler.register(now: now, rng: &rng)
        out += output.events.map { .log($0) } + reportGuarantee()
        return out + output.grants.flatMap { trigger($0, now: now) }
    }

    /// The `guarantee` event, and the ledger's note of it for `status --db`.
    func reportGuarantee() -> [DeviceDirective] {
        let line = guaranteeLine()
        return [.log(line), .recordGuarantee(line)]
    }

    /// The `guarantee` event: what registering the job returned, measured.
    public func guaranteeLine() -> EventLine {
        EventLine(.guarantee, Self.fields(of: guarantee) + [("requestedSec", .double(settings.desiredIntervalSec))])
    }

    static func fields(of guarantee: Guarantee) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("kind", .string(guarantee.kind))]
        switch guarantee {
        case .periodic(let minimum, let typical):
            fields.append(("minimumSec", .double(minimum)))
            if let typical { fields.append(("typicalSec", .double(typical))) }
        case .opportunistic(let gap):
            if let gap { fields.append(("observedMedianGapSec", .double(gap))) }
        case .foregroundOnly(let triggers, let reason):
            fields.append(("triggers", .array(triggers.map { .string($0.rawValue) })))
            if let reason { fields.append(("reason", .string(reason))) }
        }
        return fields
    }
}
