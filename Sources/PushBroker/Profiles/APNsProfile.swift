/// Apple Push Notification service, for background (content-available) pushes:
/// - while the device cannot take a background push (offline, or low-power mode with the app not in front) APNs keeps
///   ONE notification per app; a newer one replaces the held one;
/// - an app the user force-quit gets no background push until it is opened again; a held one is discarded;
/// - with Background App Refresh off, background pushes are not delivered either (discarded);
/// - background pushes are throttled: at most `throttlePerHour` in any sliding simulated hour (Apple asks for "no more
///   than two or three per hour"); a push to an app in the foreground is not throttled and does not count.
/// See docs/BROKER.md for the sources.
public struct APNsProfile: Sendable, Equatable {
    public let throttlePerHour: Int
    public private(set) var held: PendingHint?
    /// Simulated seconds of the background pushes let through in the last hour, oldest first.
    public private(set) var recentBackground: [Double] = []

    static let window: Double = 3600

    public init(throttlePerHour: Int) {
        self.throttlePerHour = throttlePerHour
    }

    public var heldCount: Int { held == nil ? 0 : 1 }

    /// Nothing APNs does waits on a timer: throttled pushes are refused at once, held ones wait for a state change.
    public var nextDeadline: Double? { nil }

    public mutating func offer(_ pending: PendingHint, _ conditions: DeviceConditions,
                               now: Double) -> [ProfileDecision] {
        if let refusal = Self.refusal(conditions) {
            return [.discard(pending, reason: refusal)]
        }
        guard Self.reachable(conditions) else {
            var decisions: [ProfileDecision] = []
            if let older = held {
                decisions.append(.coalesce(older, by: pending.id))
            }
            held = pending
            decisions.append(.hold(pending, reason: Self.unreachableReason(conditions)))
            return decisions
        }
        return [send(pending, conditions, now: now)]
    }

    /// `offer` would deliver at once and change nothing: a reachable app in front, or no throttle to count against.
    func deliversAtOnce(_ conditions: DeviceConditions) -> Bool {
        Self.refusal(conditions) == nil && Self.reachable(conditions)
            && (conditions.isForeground || throttlePerHour <= 0)
    }

    public mutating func conditionsChanged(to conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        guard let pending = held else { return [] }
        if let refusal = Self.refusal(conditions) {
            held = nil
            return [.discard(pending, reason: refusal)]
        }
        guard Self.reachable(conditions) else { return [] }
        held = nil
        return [send(pending, conditions, now: now)]
    }

    public mutating func tick(_ conditions: DeviceConditions, now: Double) -> [ProfileDecision] { [] }

    private mutating func send(_ pending: PendingHint, _ conditions: DeviceConditions, now: Double) -> ProfileDecision {
        if conditions.isForeground || throttlePerHour <= 0 {
            return .deliver(pending)
        }
        recentBackground.removeAll { $0 <= now - Self.window }
        guard recentBackground.count < throttlePerHour else { return .throttle(pending) }
        recentBackground.append(now)
        return .deliver(pending)
    }

    /// Why APNs would not hand this app a push at all, or nil.
    static func refusal(_ conditions: DeviceConditions) -> String? {
        if conditions.app == .forceQuit { return "force-quit" }
        if !conditions.isForeground && conditions.refreshOff { return "refresh-off" }
        return nil
    }

    static func reachable(_ conditions: DeviceConditions) -> Bool {
        conditions.online && (conditions.isForeground || !conditions.doze)
    }

    static func unreachableReason(_ conditions: DeviceConditions) -> String {
        conditions.online ? "low-power" : "offline"
    }
}
