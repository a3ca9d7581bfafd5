/// Web Push (RFC 8030) through a browser's push service:
/// - a message for a browser that cannot take it (offline, or the browser is not running: app `forceQuit`) is stored
///   for its TTL and expires past it;
/// - a closed tab is reachable while the device is online: the browser wakes the site's service worker for a push;
/// - doze and background refresh do not apply.
/// See docs/BROKER.md for the sources.
public struct WebPushProfile: Sendable, Equatable {
    public let ttlSec: Double
    /// Held hints with the simulated second each expires, in arrival order.
    public private(set) var held: [(pending: PendingHint, expiresAt: Double)] = []

    public init(ttlSec: Double) {
        self.ttlSec = ttlSec
    }

    public static func == (lhs: WebPushProfile, rhs: WebPushProfile) -> Bool {
        lhs.ttlSec == rhs.ttlSec && lhs.held.elementsEqual(rhs.held, by: { $0 == $1 })
    }

    public var heldCount: Int { held.count }

    public var nextDeadline: Double? { held.lazy.map(\.expiresAt).min() }

    public mutating func offer(_ pending: PendingHint, _ conditions: DeviceConditions,
                               now: Double) -> [ProfileDecision] {
        if Self.reachable(conditions) { return [.deliver(pending)] }
        // A TTL of zero means "now or never" in RFC 8030: the push service does not store it.
        guard ttlSec > 0 else { return [.expire(pending)] }
        held.append((pending, now + ttlSec))
        return [.hold(pending, reason: conditions.online ? "browser-not-running" : "offline")]
    }

    public mutating func conditionsChanged(to conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        var decisions = expire(now: now)
        guard Self.reachable(conditions) else { return decisions }
        decisions += held.map { .deliver($0.pending) }
        held = []
        return decisions
    }

    public mutating func tick(_ conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        expire(now: now)
    }

    private mutating func expire(now: Double) -> [ProfileDecision] {
        let expired = held.filter { $0.expiresAt <= now }
        guard !expired.isEmpty else { return [] }
        held.removeAll { $0.expiresAt <= now }
        return expired.map { .expire($0.pending) }
    }

    static func reachable(_ conditions: DeviceConditions) -> Bool {
        conditions.online && conditions.app != .forceQuit
    }
}
