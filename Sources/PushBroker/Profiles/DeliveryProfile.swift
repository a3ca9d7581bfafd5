/// One device's delivery profile and the state it keeps for that device.
public enum DeliveryProfile: Sendable, Equatable {
    case apns(APNsProfile)
    case fcm(FCMProfile)
    case webpush(WebPushProfile)

    public init(_ kind: ProfileKind, settings: ProfileSettings) {
        switch kind {
        case .apns: self = .apns(APNsProfile(throttlePerHour: settings.apnsThrottlePerHour))
        case .fcm: self = .fcm(FCMProfile(settings: settings))
        case .webpush: self = .webpush(WebPushProfile(ttlSec: settings.webpushTTLSec))
        }
    }

    public var kind: ProfileKind {
        switch self {
        case .apns: return .apns
        case .fcm: return .fcm
        case .webpush: return .webpush
        }
    }

    /// Hints the profile holds for the device now.
    public var heldCount: Int {
        switch self {
        case .apns(let profile): return profile.heldCount
        case .fcm(let profile): return profile.heldCount
        case .webpush(let profile): return profile.heldCount
        }
    }

    /// The simulated second the profile next needs a tick, if any.
    public var nextDeadline: Double? {
        switch self {
        case .apns(let profile): return profile.nextDeadline
        case .fcm(let profile): return profile.nextDeadline
        case .webpush(let profile): return profile.nextDeadline
        }
    }

    /// True when `offer` under `conditions` would answer `[.deliver(pending)]` and change nothing: the common case,
    /// which
    /// the instance then takes without a decision list.
    public func deliversAtOnce(_ conditions: DeviceConditions) -> Bool {
        switch self {
        case .apns(let profile): return profile.deliversAtOnce(conditions)
        case .fcm(let profile): return profile.deliversAtOnce(conditions)
        case .webpush: return WebPushProfile.reachable(conditions)
        }
    }

    /// A hint for the device arrived.
    public mutating func offer(_ pending: PendingHint, _ conditions: DeviceConditions,
                               now: Double) -> [ProfileDecision] {
        switch self {
        case .apns(var profile):
            defer { self = .apns(profile) }
            return profile.offer(pending, conditions, now: now)
        case .fcm(var profile):
            defer { self = .fcm(profile) }
            return profile.offer(pending, conditions, now: now)
        case .webpush(var profile):
            defer { self = .webpush(profile) }
            return profile.offer(pending, conditions, now: now)
        }
    }

    /// The device reported new conditions: held hints may go out, or be thrown away.
    public mutating func conditionsChanged(to conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        switch self {
        case .apns(var profile):
            defer { self = .apns(profile) }
            return profile.conditionsChanged(to: conditions, now: now)
        case .fcm(var profile):
            defer { self = .fcm(profile) }
            return profile.conditionsChanged(to: conditions, now: now)
        case .webpush(var profile):
            defer { self = .webpush(profile) }
            return profile.conditionsChanged(to: conditions, now: now)
        }
    }

    /// Time passed: windows open, TTLs run out.
    public mutating func tick(_ conditions: DeviceConditions, now: Double) -> [ProfileDecision] {
        switch self {
        case .apns(var profile):
            defer { self = .apns(profile) }
            return profile.tick(conditions, now: now)
        case .fcm(var profile):
            defer { self = .fcm(profile) }
            return profile.tick(conditions, now: now)
        case .webpush(var profile):
            defer { self = .webpush(profile) }
            return profile.tick(conditions, now: now)
        }
    }
}
