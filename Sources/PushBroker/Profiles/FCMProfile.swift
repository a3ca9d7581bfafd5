/// Firebase Cloud Messaging:
/// - while the device is offline FCM stores up to `maxHeld` messages; one more and it deletes them all
///   (`drop`, reason `fcm-overflow`) and, when the device is back, tells the app through `onDeletedMessages`: here
///   one `resync` hint for the account's latest head, or, for an app that ignores `onDeletedMessages`
///   (`fcmDeletedMessages: ignored`), `resyncIgnored`;
/// - with collapse keys (the account), a newer stored hint replaces the older one of the same key, and at most
///   `maxCollapseKeys` keys are stored per device (the oldest key is dropped, reason `fcm-collapse-limit`);
/// - a normal-priority message to a dozing device waits for the next maintenance window (every `dozeWindowSec` of
///   doze, counted from when doze began); a high-priority one wakes the device;
/// - with `demoteAfter` > 0, after that many high-priority hints (data messages: none shows a notification) FCM
///   deprioritizes the device's later ones to normal: held in doze with reason `fcm-demoted` until a window;
/// - priority `visible` is the app server's choice per message: high for a new draft (shown as a notification, so
///   never counted towards demotion), normal for the rest;
/// - an app the user force-stopped gets nothing (discarded, held ones too) until it is opened again.
/// See docs/BROKER.md for the sources.
public struct FCMProfile: Sendable, Equatable {
    public let maxHeld: Int
    public let priority: FCMPriority
    public let collapse: FCMCollapse
    public let maxCollapseKeys: Int
    public let dozeWindowSec: Double
    public let demoteAfter: Int
    public let deletedMessages: FCMDeletedMessages
    /// High-priority hints offered while reachable, none leading to a visible notification.
    public private(set) var highSent = 0
    public private(set) var held: [PendingHint] = []
    /// FCM deleted stored hints; the next delivery starts with a resync hint.
    public private(set) var overflowed = false
    /// When the current doze began, nil while awake or offline.
    public private(set) var dozeSince: Double?
    /// The maintenance window the held hints wait for, while they wait for one.
    public private(set) var windowAt: Double?

    public init(settings: ProfileSettings) {
        self.maxHeld = settings.fcmMaxHeld
        self.priority = settings.fcmPriority
        self.collapse = settings.fcmCollapse
        self.maxCollapseKeys = settings.fcmMaxCollapseKeys
        self.dozeWindowSec = settings.dozeWindowSec
        self.demoteAfter = settings.fcmDemoteAfter
        self.deletedMessages = settings.fcmDeletedMessages
    }

    public var heldCount: Int { held.count }

    /// FCM now treats this device's high-priority hints as normal.
    public var demoted: Bool { priority == .high && demoteAfter > 0 && highSent >= demoteAfter }

    public var nextDeadline: Double? { windowAt }

    public mutating func offer(_ pending: PendingHint, _ conditions: DeviceConditions,
                               now: Double) -> [ProfileDecision] {
        if conditions.app == .forceQuit {
            return [.discard(pending, reason: "force-stopped")]
        }
        guard let reason = waitReason(conditions, priority(of: pending)) else {
            if priority == .high && demoteAfter > 0 { highSent += 1 }
            return [.deliver(pending)]
        }
        let decisions = store(pending, reason: reason)
        waitForWindow(reason, now: now)
        return decisions
    }

    /// `offer` would deliver at once and change nothing.
    func deliversAtOnce(_ conditions: DeviceConditions) -> Bool {
        // With demotion on, `offer` counts each high-priority hint: it must be called.
        conditions.app != .forceQuit && waitReason(conditions, storedPriority) == nil
            && !(priority == .high && demoteAfter > 0)
    }

    public mutating func conditionsChanged(to conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        if conditions.doze && conditions.online {
            if dozeSince == nil { dozeSince = now }
        } else {
            dozeSince = nil
        }
        windowAt = nil
        if conditions.app == .forceQuit {
            let discarded = held.map { ProfileDecision.discard($0, reason: "force-stopped") }
            held = []
            return discarded
        }
        guard let reason = waitReason(conditions, storedPriority) else { return flush() }
        waitForWindow(reason, now: now)
        return []
    }

    public mutating func tick(_ conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        guard let windowAt, windowAt <= now else { return [] }
        return flush()
    }

    /// The priority the app server gives this hint.
    private func priority(of pending: PendingHint) -> FCMPriority {
        guard priority == .visible else { return priority }
        return pending.newDraft ? .high : .normal
    }

    /// The priority the stored hints wait with: under `visible` they go out together at the window, a new draft's
    /// with the rest (the lab keeps one window for all of a device's stored hints).
    private var storedPriority: FCMPriority { priority == .visible ? .normal : priority }

    /// Why a hint of `hintPriority` cannot go out now, or nil.
    private func waitReason(_ conditions: DeviceConditions, _ hintPriority: FCMPriority) -> String? {
        if !conditions.online { return "offline" }
        if conditions.doze && !conditions.isForeground && hintPriority == .normal { return "doze" }
        if conditions.doze && !conditions.isForeground && demoted { return "fcm-demoted" }
        return nil
    }

    /// Hints held in doze go out at the first maintenance window after they began to wait: windows fall every
    /// `dozeWindowSec` after doze began.
    private mutating func waitForWindow(_ reason: String, now: Double) {
        guard reason == "doze" || reason == "fcm-demoted", windowAt == nil, !held.isEmpty || overflowed,
              let since = dozeSince else { return }
        let interval = max(dozeWindowSec, 1)
        windowAt = since + (((now - since) / interval).rounded(.down) + 1) * interval
    }

    private mutating func flush() -> [ProfileDecision] {
        windowAt = nil
        var decisions: [ProfileDecision] = []
        if overflowed { decisions.append(deletedMessages == .handled ? .resync : .resyncIgnored) }
        overflowed = false
        decisions += held.map { .deliver($0) }
        held = []
        return decisions
    }

    private mutating func store(_ pending: PendingHint, reason: String) -> [ProfileDecision] {
        var decisions: [ProfileDecision] = []
        if collapse == .account {
            if let index = held.firstIndex(where: { $0.account == pending.account }) {
                decisions.append(.coalesce(held.remove(at: index), by: pending.id))
            } else if held.count >= maxCollapseKeys {
                decisions.append(.drop(held.removeFirst(), reason: "fcm-collapse-limit"))
            }
        }
        if held.count >= maxHeld {
            decisions += held.map { .drop($0, reason: "fcm-overflow") }
            decisions.append(.drop(pending, reason: "fcm-overflow"))
            held = []
            overflowed = true
            return decisions
        }
        held.append(pending)
        decisions.append(.hold(pending, reason: reason))
        return decisions
    }
}
