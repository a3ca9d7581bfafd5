import SyncProtocol

/// The knobs of the three delivery profiles, and which profile each platform uses.
public struct ProfileSettings: Sendable, Equatable {
    public var android: ProfileKind = .fcm
    public var ios: ProfileKind = .apns
    public var web: ProfileKind = .webpush
    /// APNs background pushes let through per device in any sliding simulated hour; 0 turns throttling off.
    public var apnsThrottlePerHour = 3
    /// Hints FCM stores for an offline device before it deletes them all.
    public var fcmMaxHeld = 100
    public var fcmPriority: FCMPriority = .high
    /// The accounts `fcmPriority` applies to; the others' hints go out at high priority. nil: all accounts. So a
    /// lesson can hold the app server's two choices side by side on one broker.
    public var fcmPriorityAccounts: Set<String>?
    public var fcmCollapse: FCMCollapse = .none
    /// The app's handling of FCM's `onDeletedMessages` after an overflow: a design switch of the app, modelled where
    /// FCM calls it.
    public var fcmDeletedMessages: FCMDeletedMessages = .handled
    /// The accounts `fcmDeletedMessages` applies to; the others' apps handle it. nil: all accounts.
    public var fcmDeletedAccounts: Set<String>?
    /// High-priority hints a device gets before FCM treats its later ones as normal priority, because none led to a
    /// notification the user saw (the lab's hints are data messages); 0: never. FCM does not publish the pattern.
    public var fcmDemoteAfter = 0
    /// Collapse keys FCM stores per device at most.
    public var fcmMaxCollapseKeys = 4
    /// Simulated seconds between doze maintenance windows.
    public var dozeWindowSec: Double = 3600
    /// Simulated seconds a Web Push hint is kept for an unreachable device.
    public var webpushTTLSec: Double = 86_400

    public init() {}

    /// The settings a device of `account` is served with: `fcmPriority` only where `fcmPriorityAccounts` says,
    /// `fcmDeletedMessages` only where `fcmDeletedAccounts` says.
    public func serving(account: String) -> ProfileSettings {
        var settings = self
        if let accounts = fcmPriorityAccounts, !accounts.contains(account) { settings.fcmPriority = .high }
        if let accounts = fcmDeletedAccounts, !accounts.contains(account) { settings.fcmDeletedMessages = .handled }
        return settings
    }

    public func kind(for platform: Platform) -> ProfileKind {
        switch platform {
        case .android: return android
        case .ios: return ios
        case .web: return web
        }
    }
}
