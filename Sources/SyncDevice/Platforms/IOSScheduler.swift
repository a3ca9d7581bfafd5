import LabKit
import SyncProtocol

/// iOS BGTaskScheduler, modelled: a BGAppRefreshTaskRequest whose `earliestBeginDate` is only a floor; windows
/// granted at random from a budget that follows how often the user opens the app and whether it charges; a window of
/// about 30 seconds whose expiration cuts a running pass off and shrinks the future budget; nothing for a force-quit
/// app until it is opened; nothing at all with Background App Refresh off. docs/DEVICE.md cites each rule.
public struct IOSScheduler: PlatformScheduler {
    /// The model's constants, in simulated seconds.
    public struct Rules: Sendable, Equatable {
        /// How long a refresh task (and a background notification) may run before its expiration handler fires.
        public var window: Double = 30
        /// Windows per day granted per daily app open, before charging and the budget factor. Six reproduces
        /// seed 000: an app opened a few times a week got 19 windows in 7 days (median gap 7 h 41 min).
        public var windowsPerOpen: Double = 6
        /// No more windows than this per day, whatever the engagement.
        public var maxWindowsPerDay: Double = 48
        /// Charging multiplies the rate.
        public var chargingFactor: Double = 2
        /// A window that ended with work still running multiplies the budget by this.
        public var expiryPenalty: Double = 0.5
        /// A window completed in time restores the budget by this factor, up to 1.
        public var completionRecovery: Double = 1.1
        public var minimumBudgetFactor: Double = 0.05
        /// The app wires `expirationHandler`: an expired window is a handled `setTaskCompleted(success: false)` and
        /// costs no budget. Off: the system kills the task and counts it as a failure (`expiryPenalty`).
        public var expirationHandler = true
        /// Whether the handler submits the next request first thing or at its end.
        public var reschedule: DeviceSettings.Reschedule = .first
        /// `BGAppRefreshTaskRequest` or `BGProcessingTaskRequest(requiresExternalPower: true)`.
        public var taskKind: DeviceSettings.TaskKind = .refresh
        /// A processing task's windows per day while charging (none on battery). 40 a day is a mean gap of 36 min:
        /// seed 000's 34 runs in 7 nights "clustered 02:00–05:00, charging" (lab's calibration).
        public var processingWindowsPerChargingDay: Double = 40
        /// How long a processing task may run (lab's number: "several minutes").
        public var processingWindow: Double = 300
        /// The handler calls `setTaskCompleted` when its pass ends. Off: the task stays open until the system expires
        /// it, and a task that never completes counts as misbehaving (`expiryPenalty` at every window, seed 002).
        public var setTaskCompleted = true
        /// Where the launch handler is registered and whether the identifiers match (seed 004).
        public var taskRegistration: DeviceSettings.TaskRegistration = .atLaunch
        /// The task's identifier, as the request and Info.plist spell it (only in events).
        public var identifier = "com.synclab.sync.refresh"

        public init() {}
    }

    public let platform = Platform.ios
    public private(set) var environment: DeviceEnvironment
    public let rules: Rules
    public let desiredInterval: Double
    /// The pending request's `earliestBeginDate`; nil when no request is pending.
    public private(set) var earliestBegin: Double?
    /// When the system will grant the next window (drawn; nil when none will come until something changes).
    public private(set) var nextGrant: Double?
    /// Shrinks when windows expire with work running, recovers when they complete.
    public private(set) var budgetFactor: Double = 1
    /// `reschedule: last`: a window's handler has not yet submitted the next request.
    public private(set) var awaitingReschedule = false
    private var now: Double = 0

    public init(environment: DeviceEnvironment, desiredInterval: Double, rules: Rules = Rules()) {
        self.environment = environment
        self.rules = rules
        self.desiredInterval = desiredInterval
    }

    public var dozing: Bool { false }
    /// How long a granted task may run.
    public var windowLength: Double { rules.taskKind == .processing ? rules.processingWindow : rules.window }
    public var nextWake: Double? { nextGrant.flatMap { $0 > now ? $0 : nil } }

    /// Windows per day at the current engagement, charging state and budget.
    public var windowsPerDay: Double {
        if rules.taskKind == .noTask { return 0 }
        if rules.taskKind == .processing {
            // requiresExternalPower: "won't run until the device is charging" (seed 004).
            return environment.charging ? rules.processingWindowsPerChargingDay * budgetFactor : 0
        }
        let base = min(rules.maxWindowsPerDay, rules.windowsPerOpen * max(0, environment.opensPerDay))
        return base * (environment.charging ? rules.chargingFactor : 1) * budgetFactor
    }

    public mutating func register(now: Double, rng: inout SeededGenerator) -> SchedulerOutput {
        self.now = now
        return SchedulerOutput(events: [submit(now: now, rng: &rng, reason: "registered at launch")])
    }

    public func guarantee(scheduledRuns: [Double]) -> Guarantee {
        guard environment.refreshOn else {
            return .foregroundOnly(triggers: [.foreground, .connectivity],
                                   reason: "Background App Refresh is off: BGTaskScheduler.submit fails (unavailable)")
        }
        guard rules.taskKind != .noTask else {
            return .foregroundOnly(triggers: [.foreground, .push],
                                   reason: "taskKind=none: no background task; a silent push wakes the app only when "
                                    + "the server has news, never for the app's own unsent edits")
        }
        return .opportunistic(observedMedianGap: Guarantee.medianGap(scheduledRuns))
    }

    public mutating func update(_ new: DeviceEnvironment, now: Double, rng: inout SeededGenerator)
        -> SchedulerOutput
    {
        self.now = now
        let old = environment
        environment = new
        var events: [EventLine] = []
        if new.app == .forceQuit && old.app != .forceQuit {
            // The system cancels the app's pending work and will not launch it until the user does.
            earliestBegin = nil
            nextGrant = nil
            events.append(EventLine(.scheduleCancelled, [("reason", "force quit: no windows until the app is opened")]))
        } else if !new.refreshOn && old.refreshOn {
            earliestBegin = nil
            nextGrant = nil
            events.append(EventLine(.scheduleCancelled, [("reason", "Background App Refresh switched off")]))
        } else if new.refreshOn && !old.refreshOn && new.app != .forceQuit {
            events.append(submit(now: now, rng: &rng, reason: "Background App Refresh switched on"))
        } else {
            // Charging, engagement, network or app state changed the rate: a new draw from now is exact for an
            // exponential wait (it has no memory).
            drawGrant(now: now, rng: &rng)
        }
        return SchedulerOutput(events: events)
    }

    public mutating func tick(now: Double, rng: inout SeededGenerator) -> SchedulerOutput {
        self.now = now
        guard let grant = nextGrant, now >= grant else { return SchedulerOutput() }
        if rules.taskRegistration == .late {
            // The system launches the app for the task; no handler was registered before launch finished, so
            // nothing runs, and nothing submits the next request either (seed 004: "nothing runs").
            earliestBegin = nil
            nextGrant = nil
            return SchedulerOutput(events: [EventLine(.iosTaskNoHandler, [
                ("identifier", .string(rules.identifier)),
                ("reason", .string("taskRegistration=late: the handler was registered after launch finished; the "
                    + "system launched the app for the task and found no handler: nothing ran, nothing was "
                    + "rescheduled")),
            ])])
        }
        var events = [EventLine(.windowGranted, [("untilSim", .double(now + windowLength)),
                                                 ("budgetFactor", .double(budgetFactor)),
                                                 ("taskKind", .string(rules.taskKind.rawValue))])]
        switch rules.reschedule {
        case .first:
            // The handler runs: it reschedules FIRST (one request grants one window), then the pass runs.
            events.append(submit(now: now, rng: &rng, reason: "rescheduled first thing in the handler"))
        case .last:
            // The switch `reschedule: last`: the one pending request was used up; the next is submitted only if
            // the handler reaches its end.
            earliestBegin = nil
            nextGrant = nil
            awaitingReschedule = true
        }
        return SchedulerOutput(grants: [.opportunistic], events: events)
    }

    public func admission(for trigger: Trigger) -> Admission {
        if trigger == .manual { return .run(limit: nil) }
        if environment.app == .forceQuit {
            return .refuse("force quit: iOS launches the app for nothing until the user opens it")
        }
        if environment.isForeground { return .run(limit: nil) }
        switch trigger {
        case .push:
            // A background notification gets about 30 s, and none at all with Background App Refresh off.
            return environment.refreshOn ? .run(limit: rules.window) : .refuse("Background App Refresh is off")
        case .opportunistic:
            return .run(limit: windowLength)
        case .connectivity:
            return .refuse("a suspended iOS app gets no connectivity event")
        case .foreground, .localEdit, .visibility, .periodic, .interval, .manual:
            return .refuse("iOS runs \(trigger.rawValue) passes only in the foreground")
        }
    }

    public func allowsContinuation(of trigger: Trigger) -> Bool {
        // One window runs one pass; what it leaves waits for the next window or the next launch.
        environment.isForeground || trigger == .manual
    }

    public mutating func passEnded(trigger: Trigger, started: Double, ended: Double, execution: Double, cutOff: Bool,
                                   rng: inout SeededGenerator) -> SchedulerOutput
    {
        now = max(now, ended)
        guard trigger == .opportunistic || (trigger == .push && !environment.isForeground) else {
            return SchedulerOutput()
        }
        var events: [EventLine] = []
        if trigger == .opportunistic && awaitingReschedule {
            awaitingReschedule = false
            if cutOff {
                events.append(EventLine(.iosScheduleLost, [
                    ("reason",
                     "reschedule=last: the task expired before the handler's last line; nothing is scheduled"),
                ]))
            } else {
                events.append(submit(now: now, rng: &rng, reason: "rescheduled at the end of the handler"))
            }
        }
        let before = budgetFactor
        // A BGTask whose handler never calls setTaskCompleted runs until the system expires it, work done or not.
        let neverCompleted = trigger == .opportunistic && !rules.setTaskCompleted
        if neverCompleted {
            events.append(EventLine(.iosTaskNotCompleted, [
                ("identifier", .string(rules.identifier)), ("cutOff", .bool(cutOff)),
                ("reason", .string("setTaskCompleted=false: the handler never called setTaskCompleted; the system "
                    + "expired the task and counts the app as misbehaving")),
            ]))
        }
        var shrinkReason: String?
        if neverCompleted {
            shrinkReason = "setTaskCompleted=false: a task that never completes is a failure"
            budgetFactor = max(rules.minimumBudgetFactor, budgetFactor * rules.expiryPenalty)
        } else if cutOff && !rules.expirationHandler {
            // Killed at expiration without setTaskCompleted: a failure, and less time in future (seeds 000, 004).
            budgetFactor = max(rules.minimumBudgetFactor, budgetFactor * rules.expiryPenalty)
        } else if !cutOff {
            budgetFactor = min(1, budgetFactor * rules.completionRecovery)
        }
        drawGrant(now: now, rng: &rng)
        if budgetFactor > before {
            // Only after a shrink: the report draws the budget as a line, which needs its way back up too.
            return SchedulerOutput(events: events + [EventLine(.budgetRecovered, [
                ("from", .double(before)), ("to", .double(budgetFactor)), ("trigger", .string(trigger.rawValue)),
            ])])
        }
        guard budgetFactor < before else { return SchedulerOutput(events: events) }
        var fields: [(String, JSONValue)] = [("from", .double(before)), ("to", .double(budgetFactor)),
                                             ("trigger", .string(trigger.rawValue))]
        if let shrinkReason { fields.append(("reason", .string(shrinkReason))) }
        return SchedulerOutput(events: events + [EventLine(.budgetShrunk, fields)])
    }

    // MARK: -

    /// `BGTaskScheduler.submit`: fails with `unavailable` when refresh is off; otherwise holds one request whose
    /// `earliestBeginDate` is a floor.
    private mutating func submit(now: Double, rng: inout SeededGenerator, reason: String) -> EventLine {
        guard environment.refreshOn else {
            earliestBegin = nil
            nextGrant = nil
            return EventLine(.scheduleUnavailable, [("api", "BGTaskScheduler.submit"),
                                                    ("reason", "Background App Refresh is off")])
        }
        guard environment.app != .forceQuit else {
            earliestBegin = nil
            nextGrant = nil
            return EventLine(.scheduleUnavailable, [("api", "BGTaskScheduler.submit"), ("reason", "force quit")])
        }
        guard rules.taskKind != .noTask else {
            // Seed 000's third attempt: no request at all, a silent push is the only background wake-up.
            earliestBegin = nil
            nextGrant = nil
            return EventLine(.scheduleSkipped, [
                ("reason", .string("taskKind=none: no BGTask request; only a silent push wakes the app in the "
                    + "background, and the server sends one only for changes it already has")),
            ])
        }
        guard rules.taskRegistration != .idMismatch else {
            // BGTaskScheduler.Error.notPermitted, which the seeds' `try? submit(request)` swallows.
            earliestBegin = nil
            nextGrant = nil
            return EventLine(.scheduleNotPermitted, [
                ("api", "BGTaskScheduler.submit"), ("identifier", .string(rules.identifier)),
                ("reason", .string("taskRegistration=idMismatch: the request's identifier is not in Info.plist's "
                    + "BGTaskSchedulerPermittedIdentifiers (notPermitted, swallowed by try?); no request is pending")),
            ])
        }
        earliestBegin = now + desiredInterval
        awaitingReschedule = false
        drawGrant(now: now, rng: &rng)
        let api = rules.taskKind == .processing
            ? "BGTaskScheduler.submit(BGProcessingTaskRequest requiresExternalPower)"
            : "BGTaskScheduler.submit(BGAppRefreshTaskRequest)"
        var fields: [(String, JSONValue)] = [
            ("api", .string(api)),
            ("earliestBeginSim", .double(now + desiredInterval)),
            ("windowsPerDay", .double(windowsPerDay)), ("reason", .string(reason)),
        ]
        if let nextGrant { fields.append(("nextWindowSim", .double(nextGrant))) }
        return EventLine(.scheduleSubmitted, fields)
    }

    /// Draws when the next window comes: never before the floor, at the budget's rate; none while the app is in the
    /// foreground (it runs there anyway), offline, force-quit or with refresh off.
    private mutating func drawGrant(now: Double, rng: inout SeededGenerator) {
        guard let floor = earliestBegin, environment.refreshOn, environment.app != .forceQuit,
              environment.online, !environment.isForeground, windowsPerDay > 0
        else {
            nextGrant = nil
            return
        }
        let meanGap = 86_400 / windowsPerDay
        nextGrant = max(floor, now) + rng.exponential(mean: meanGap)
    }
}
