import LabKit
import SyncProtocol

/// Android WorkManager, modelled: unique periodic work with a 15-minute floor and a flex window, deferred by doze
/// and rationed by the standby bucket while on battery, stopped by a force stop until the app is opened.
/// docs/DEVICE.md cites the source of each rule.
public struct AndroidScheduler: PlatformScheduler {
    /// The model's constants, in simulated seconds.
    public struct Rules: Sendable, Equatable {
        /// `PeriodicWorkRequest.MIN_PERIODIC_INTERVAL_MILLIS`.
        public var minimumInterval: Double = 15 * 60
        /// The flex window at the end of each period in which the run may happen. 0 is WorkManager's default
        /// (flex = interval): the next run is due one interval after the last one; with a flex F it may start F
        /// earlier (`MIN_PERIODIC_FLEX_MILLIS` is 5 minutes).
        public var flex: Double = 0
        /// JobScheduler batches jobs: a due job starts up to this much later.
        public var batchingDelay: Double = 2 * 60
        /// Idle (app not in the foreground) and unplugged this long: the device dozes.
        public var dozeAfter: Double = 60 * 60
        /// Gap to the first maintenance window after doze begins; each later gap doubles up to `maintenanceMaxGap`.
        public var maintenanceFirstGap: Double = 60 * 60
        public var maintenanceMaxGap: Double = 6 * 60 * 60
        /// How long a maintenance window stays open.
        public var maintenanceLength: Double = 10 * 60
        /// A worker is stopped after ten minutes.
        public var workerLimit: Double = 10 * 60
        /// Job execution time a bucket allows per rolling window while on battery (Android 12+ quotas).
        public var quotas: [StandbyBucket: Quota] = [
            .active: Quota(allowed: 20 * 60, window: 60 * 60), .workingSet: Quota(allowed: 10 * 60, window: 4 * 3_600),
            .frequent: Quota(allowed: 10 * 60, window: 12 * 3_600), .rare: Quota(allowed: 10 * 60, window: 24 * 3_600),
        ]
        /// The least execution time one job is charged (process start, network setup), so very short passes
        /// still use quota.
        public var minimumCharge: Double = 10
        /// A rare app is restricted "except during certain short periods (at a minimum, once a day) when they are
        /// allowed to execute jobs, access the network" (UsageStatsManager.STANDBY_BUCKET_RARE). The lab's reading:
        /// on battery, its background jobs start only in one session of `rareSessionLength` every
        /// `rareSessionEvery`, opened by the first job that runs. nil: the time quota alone rations it.
        public var rareSessionEvery: Double? = 24 * 3_600
        public var rareSessionLength: Double = 10 * 60

        public init() {}
    }

    /// Execution time allowed per rolling window.
    public struct Quota: Sendable, Equatable {
        public var allowed: Double
        public var window: Double
    }

    /// App Standby buckets, from how often the user opens the app.
    public enum StandbyBucket: String, Sendable, CaseIterable {
        case active, workingSet, frequent, rare

        /// The lab's mapping (Android derives buckets from usage it does not publish): in use → active; opened
        /// daily → working set; weekly → frequent; less → rare.
        public static func from(opensPerDay: Double, foreground: Bool) -> StandbyBucket {
            if foreground { return .active }
            if opensPerDay >= 1 { return .workingSet }
            if opensPerDay >= 1.0 / 7 { return .frequent }
            return .rare
        }
    }

    public let platform = Platform.android
    public private(set) var environment: DeviceEnvironment
    public let rules: Rules
    public let desiredInterval: Double
    /// The unique periodic work is enqueued (WorkManager keeps it across restarts).
    public private(set) var enqueued = false
    /// Force stop: nothing runs until the user opens the app.
    public private(set) var forceStopped: Bool
    /// When the next periodic run becomes eligible (drawn inside the flex window, plus batching).
    public private(set) var nextRun: Double?
    /// Since when the device has been idle and unplugged (nil: in use or charging).
    public private(set) var idleSince: Double?
    public private(set) var dozeStart: Double?
    public private(set) var nextMaintenance: Double?
    public private(set) var maintenanceUntil: Double?
    private var maintenanceGap: Double
    /// Background job execution charged against the bucket quota: (start, seconds).
    private var charges: [(at: Double, cost: Double)] = []
    /// When the rare bucket's current session opened (nil: none yet).
    public private(set) var rareSessionStart: Double?
    /// The due run a `bucket.deferred` was written for, so one deferral is told once.
    private var deferralTold: Double?
    private var now: Double = 0

    public init(environment: DeviceEnvironment, desiredInterval: Double, rules: Rules = Rules()) {
        self.environment = environment
        self.rules = rules
        self.desiredInterval = desiredInterval
        self.forceStopped = environment.app == .forceQuit
        self.maintenanceGap = rules.maintenanceFirstGap
    }

    /// The period WorkManager uses: the request, floored at 15 minutes.
    public var interval: Double { max(desiredInterval, rules.minimumInterval) }
    public var dozing: Bool { dozeStart != nil }
    public var bucket: StandbyBucket {
        StandbyBucket.from(opensPerDay: environment.opensPerDay, foreground: environment.isForeground)
    }

    /// The earliest of the scheduler's times still ahead. Read with no list built: a pool asks it of every device
    /// that received something, at every turn of its loop.
    public var nextWake: Double? {
        let now = self.now
        let ahead = { (time: Double?) in time.flatMap { $0 > now ? $0 : nil } }
        var earliest = ahead(nextRun)
        if let idleSince, dozeStart == nil { earliest = earlier(earliest, ahead(idleSince + rules.dozeAfter)) }
        earliest = earlier(earliest, ahead(nextMaintenance))
        earliest = earlier(earliest, ahead(quotaFreeAt(now)))
        return earlier(earliest, ahead(rareSessionFreeAt(now)))
    }

    public mutating func register(now: Double, rng: inout SeededGenerator) -> SchedulerOutput {
        self.now = now
        _ = trackIdle(now: now)
        // enqueueUniquePeriodicWork with KEEP: an existing schedule is kept, a new one starts its first period now.
        guard !enqueued else { return SchedulerOutput() }
        enqueued = true
        scheduleNextRun(from: now, rng: &rng)
        return SchedulerOutput(events: [EventLine(.scheduleSubmitted, [
            ("api", "WorkManager.enqueueUniquePeriodicWork"), ("intervalSec", .double(interval)),
            ("requestedSec", .double(desiredInterval)), ("nextRunSim", .double(nextRun ?? now)),
        ])])
    }

    public func guarantee(scheduledRuns: [Double]) -> Guarantee {
        .periodic(minimum: interval, typical: Guarantee.medianGap(scheduledRuns))
    }

    public mutating func update(_ new: DeviceEnvironment, now: Double, rng: inout SeededGenerator)
        -> SchedulerOutput
    {
        self.now = now
        let old = environment
        environment = new
        var events: [EventLine] = []
        if new.app == .forceQuit && old.app != .forceQuit {
            forceStopped = true
            events.append(EventLine(.scheduleStopped, [("reason", "force stop: no work runs until the app is opened")]))
        }
        if new.app == .foreground && forceStopped {
            forceStopped = false
        }
        events += trackIdle(now: now)
        return SchedulerOutput(events: events) + tick(now: now, rng: &rng)
    }

    /// Doze needs the screen off (app not in use, no other app in use) and no charger; either ends it at once.
    private mutating func trackIdle(now: Double) -> [EventLine] {
        if !environment.isForeground && !environment.charging && !environment.screenOn {
            if idleSince == nil { idleSince = now }
            return []
        }
        idleSince = nil
        var events: [EventLine] = []
        if dozeStart != nil {
            let reason = environment.charging ? "charging" : environment.isForeground ? "in use" : "screen on"
            events.append(EventLine(.dozeExit, [("reason", .string(reason))]))
        }
        dozeStart = nil
        nextMaintenance = nil
        maintenanceUntil = nil
        maintenanceGap = rules.maintenanceFirstGap
        return events
    }

    public mutating func tick(now: Double, rng: inout SeededGenerator) -> SchedulerOutput {
        self.now = now
        var events: [EventLine] = []
        if let idleSince, dozeStart == nil, now >= idleSince + rules.dozeAfter {
            let start = idleSince + rules.dozeAfter
            dozeStart = start
            nextMaintenance = start + maintenanceGap
            events.append(EventLine(.dozeEnter, [("nextMaintenanceSim", .double(start + maintenanceGap))]))
        }
        if let window = nextMaintenance, now >= window {
            maintenanceUntil = window + rules.maintenanceLength
            maintenanceGap = min(maintenanceGap * 2, rules.maintenanceMaxGap)
            nextMaintenance = window + maintenanceGap
            events.append(EventLine(.dozeMaintenance, [("untilSim", .double(window + rules.maintenanceLength))]))
        }
        if let until = maintenanceUntil, now >= until { maintenanceUntil = nil }
        var grants: [Trigger] = []
        let blocker = nextRun.map { now >= $0 } == true ? periodicBlocker(now) : nil
        if let due = nextRun, let blocker, deferralTold != due, let until = bucketFreeAt(now) {
            // The bucket, not doze, holds a due run: said once per run, with when it may start.
            deferralTold = due
            events.append(EventLine(.bucketDeferred, [("bucket", .string(bucket.rawValue)),
                ("reason", .string(blocker)), ("dueSim", .double(due)), ("untilSim", .double(until))]))
        }
        if let due = nextRun, now >= due, blocker == nil {
            grants.append(.periodic)
            if rareSessionRestricts, rareSessionStart.map({ now >= $0 + (rules.rareSessionEvery ?? 0) }) ?? true {
                rareSessionStart = now
            }
            // The next period starts with this run, so a run that is coalesced behind another pass still keeps
            // the schedule going.
            scheduleNextRun(from: now, rng: &rng)
        }
        return SchedulerOutput(grants: grants, events: events)
    }

    /// Why periodic work cannot run now, nil when it can.
    public func periodicBlocker(_ now: Double) -> String? {
        if !enqueued { return "not enqueued" }
        if forceStopped { return "force stopped" }
        if !environment.online { return "network constraint: offline" }
        if dozing && (maintenanceUntil.map { now >= $0 } ?? true) { return "doze: waiting for a maintenance window" }
        if !environment.charging && !quotaAllows(now) { return "standby bucket \(bucket.rawValue): quota used" }
        if rareSessionFreeAt(now) != nil { return "standby bucket rare: outside its daily session" }
        return nil
    }

    public func admission(for trigger: Trigger) -> Admission {
        if trigger == .manual { return .run(limit: nil) }
        if forceStopped { return .refuse("force stopped: nothing runs until the user opens the app") }
        if environment.isForeground { return .run(limit: nil) }
        switch trigger {
        case .push:
            // A high-priority FCM message wakes the app, even in doze; the broker decides which arrive.
            return .run(limit: rules.workerLimit)
        case .periodic:
            return .run(limit: rules.workerLimit)
        case .connectivity:
            if dozing && maintenanceUntil == nil { return .refuse("doze: network access is suspended") }
            return .run(limit: rules.workerLimit)
        case .foreground, .localEdit, .visibility, .opportunistic, .interval, .manual:
            return .refuse("android runs \(trigger.rawValue) passes only in the foreground")
        }
    }

    public func allowsContinuation(of trigger: Trigger) -> Bool {
        if case .run = admission(for: trigger) { return true }
        return false
    }

    public mutating func passEnded(trigger: Trigger, started: Double, ended: Double, execution: Double, cutOff: Bool,
                                   rng: inout SeededGenerator) -> SchedulerOutput
    {
        now = max(now, ended)
        // Job time counts against the bucket while on battery; expedited (push) work has its own allowance.
        if !environment.isForeground && !environment.charging && (trigger == .periodic || trigger == .connectivity) {
            charges.append((started, max(rules.minimumCharge, execution)))
        }
        let longest = rules.quotas.values.map(\.window).max() ?? 0
        charges.removeAll { $0.at <= ended - longest }
        return SchedulerOutput()
    }

    // MARK: -

    private mutating func scheduleNextRun(from start: Double, rng: inout SeededGenerator) {
        let flex = min(rules.flex, interval)
        nextRun = start + interval - flex + rng.unit() * flex + rng.unit() * rules.batchingDelay
    }

    /// On battery in the rare bucket with sessions on: jobs start only inside a session.
    private var rareSessionRestricts: Bool {
        rules.rareSessionEvery != nil && bucket == .rare && !environment.charging
    }

    /// When the rare bucket's next session may open; nil when a job may start now (in a session, or the next due).
    private func rareSessionFreeAt(_ now: Double) -> Double? {
        guard rareSessionRestricts, let every = rules.rareSessionEvery, let start = rareSessionStart else { return nil }
        if now < start + rules.rareSessionLength || now >= start + every { return nil }
        return start + every
    }

    /// When the bucket (quota or session) next lets a job start; nil when it is not what holds the job.
    private func bucketFreeAt(_ now: Double) -> Double? {
        if dozing || forceStopped || !environment.online { return nil }
        return [quotaFreeAt(now), rareSessionFreeAt(now)].compactMap { $0 }.max()
    }

    private func quota() -> (allowed: Double, window: Double) {
        let quota = rules.quotas[bucket] ?? Quota(allowed: 10 * 60, window: 24 * 3_600)
        return (quota.allowed, quota.window)
    }

    private func quotaAllows(_ now: Double) -> Bool {
        let (allowed, window) = quota()
        let used = charges.filter { $0.at > now - window }.reduce(0) { $0 + $1.cost }
        return used < allowed
    }

    /// When enough charged time leaves the rolling window for a job to run again; nil when the quota allows now.
    private func quotaFreeAt(_ now: Double) -> Double? {
        guard !environment.charging, !quotaAllows(now) else { return nil }
        let (allowed, window) = quota()
        var used = charges.filter { $0.at > now - window }.reduce(0) { $0 + $1.cost }
        for charge in charges.filter({ $0.at > now - window }).sorted(by: { $0.at < $1.at }) {
            used -= charge.cost
            if used < allowed { return charge.at + window + 0.001 }
        }
        return nil
    }
}
