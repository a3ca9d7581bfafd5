import LabKit
import SyncProtocol

/// The web target, modelled: a page has a `setInterval` timer and `online` / `visibilitychange` listeners only while
/// its tab is open; a closed tab runs nothing (seed 000's "0 syncs"). docs/DEVICE.md cites each rule.
public struct WebScheduler: PlatformScheduler {
    public let platform = Platform.web
    public private(set) var environment: DeviceEnvironment
    public let desiredInterval: Double
    /// Which page events have a listener (the switch `webTriggers`).
    public let triggers: DeviceSettings.WebTriggers
    /// The interval timer's next firing; nil while the tab is closed.
    public private(set) var nextInterval: Double?
    private var now: Double = 0

    public init(environment: DeviceEnvironment, desiredInterval: Double,
                triggers: DeviceSettings.WebTriggers = .intervalOnlineVisibility) {
        self.environment = environment
        self.desiredInterval = max(1, desiredInterval)
        self.triggers = triggers
    }

    /// The tab exists (visible or hidden).
    public var tabOpen: Bool { environment.app == .foreground || environment.app == .background }
    public var dozing: Bool { false }
    public var nextWake: Double? { nextInterval.flatMap { $0 > now ? $0 : nil } }

    public mutating func register(now: Double, rng: inout SeededGenerator) -> SchedulerOutput {
        self.now = now
        guard tabOpen else { return SchedulerOutput() }
        if nextInterval == nil { nextInterval = now + desiredInterval }
        return SchedulerOutput(events: [EventLine(.scheduleSubmitted, [
            ("api", "window.setInterval"), ("intervalSec", .double(desiredInterval)),
            ("note", "runs only while this tab is open"),
        ])])
    }

    public func guarantee(scheduledRuns: [Double]) -> Guarantee {
        .foregroundOnly(triggers: [.foreground, .visibility, .connectivity, .interval].filter { triggers.wires($0) },
                        reason: "a closed page has no timer and no listener")
    }

    public mutating func update(_ new: DeviceEnvironment, now: Double, rng: inout SeededGenerator)
        -> SchedulerOutput
    {
        self.now = now
        let wasOpen = tabOpen
        environment = new
        if tabOpen && !wasOpen {
            // A page load starts a new timer.
            nextInterval = now + desiredInterval
        } else if !tabOpen && wasOpen {
            nextInterval = nil
            return SchedulerOutput(events: [EventLine(.scheduleCancelled,
                                                    [("reason", "tab closed: the timer is gone")])])
        }
        return SchedulerOutput()
    }

    public mutating func tick(now: Double, rng: inout SeededGenerator) -> SchedulerOutput {
        self.now = now
        guard let due = nextInterval, now >= due, tabOpen else { return SchedulerOutput() }
        var next = due
        while next <= now { next += desiredInterval }
        nextInterval = next
        return SchedulerOutput(grants: [.interval])
    }

    public func admission(for trigger: Trigger) -> Admission {
        if trigger == .manual { return .run(limit: nil) }
        guard tabOpen else { return .refuse("the tab is closed: no page, no timer, no listener") }
        guard triggers.wires(trigger) else {
            return .refuse("webTriggers=\(triggers.rawValue): no listener for \(trigger.rawValue) is wired")
        }
        switch trigger {
        case .push, .foreground, .localEdit, .connectivity, .interval, .visibility, .manual:
            return .run(limit: nil)
        case .periodic, .opportunistic:
            return .refuse("the web has no \(trigger.rawValue) scheduler")
        }
    }

    public func allowsContinuation(of trigger: Trigger) -> Bool { tabOpen || trigger == .manual }

    public mutating func passEnded(trigger: Trigger, started: Double, ended: Double, execution: Double, cutOff: Bool,
                                   rng: inout SeededGenerator) -> SchedulerOutput
    {
        now = max(now, ended)
        return SchedulerOutput()
    }
}
