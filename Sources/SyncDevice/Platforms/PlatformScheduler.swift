import LabKit
import SyncProtocol

/// A platform's scheduler, modelled in simulated time: it answers "may I run now?" (the ledger answers "what still
/// must be resolved?"). Each model is a pure value: it reads no clock and draws no randomness of its own; `now` and
/// a seeded generator are handed in. docs/DEVICE.md gives every rule with its source.
public protocol PlatformScheduler: Sendable {
    var platform: Platform { get }
    /// What the OS knows now (app state, network, charging, engagement, refresh switch).
    var environment: DeviceEnvironment { get }
    /// Android doze: the device is idle and unplugged; background work waits for maintenance windows.
    var dozing: Bool { get }
    /// The next simulated second at which `tick` may have something to do, nil when only an environment change can.
    var nextWake: Double? { get }

    /// The app launched: it registers its sync job with the desired interval (seed 000's `register`).
    mutating func register(now: Double, rng: inout SeededGenerator) -> SchedulerOutput
    /// What registering the job returns: measured from `scheduledRuns` (when this device's scheduler ran the job:
    /// periodic runs, refresh windows), never the request.
    func guarantee(scheduledRuns: [Double]) -> Guarantee
    /// The OS state changed.
    mutating func update(_ environment: DeviceEnvironment, now: Double, rng: inout SeededGenerator)
        -> SchedulerOutput
    /// Time passed: the grants (periodic run, refresh window, interval timer) that are due at `now`.
    mutating func tick(now: Double, rng: inout SeededGenerator) -> SchedulerOutput
    /// Whether an event trigger may run a pass now, and for how long.
    func admission(for trigger: Trigger) -> Admission
    /// Whether a pass that left work behind may be followed at once by another with the same trigger.
    func allowsContinuation(of trigger: Trigger) -> Bool
    /// A pass that ran for `trigger` from `started` to `ended` (simulated) ended after `execution` seconds of
    /// execution; `cutOff` says its execution limit ended it.
    mutating func passEnded(trigger: Trigger, started: Double, ended: Double, execution: Double, cutOff: Bool,
                            rng: inout SeededGenerator) -> SchedulerOutput
}

/// Makes the model for a platform, with the design switches of `settings` that belong to it.
public func makeScheduler(_ platform: Platform, environment: DeviceEnvironment, settings: DeviceSettings)
    -> any PlatformScheduler
{
    let desired = settings.desiredIntervalSec
    switch platform {
    case .android:
        return AndroidScheduler(environment: environment, desiredInterval: desired)
    case .ios:
        var rules = IOSScheduler.Rules()
        rules.expirationHandler = settings.expirationHandler
        rules.reschedule = settings.reschedule
        rules.taskKind = settings.taskKind
        rules.setTaskCompleted = settings.setTaskCompleted
        rules.taskRegistration = settings.taskRegistration
        return IOSScheduler(environment: environment, desiredInterval: desired, rules: rules)
    case .web:
        return WebScheduler(environment: environment, desiredInterval: desired, triggers: settings.webTriggers)
    }
}

/// The earlier of two simulated times, either of which may be missing (the wakes of an instance and its scheduler).
func earlier(_ a: Double?, _ b: Double?) -> Double? {
    guard let a else { return b }
    guard let b else { return a }
    return Swift.min(a, b)
}
