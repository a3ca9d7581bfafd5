import SyncProtocol

/// The push services the broker can imitate.
public enum ProfileKind: String, Sendable, CaseIterable {
    case apns, fcm, webpush

    /// The service a platform uses unless a flag says otherwise.
    public static func standard(for platform: Platform) -> ProfileKind {
        switch platform {
        case .android: return .fcm
        case .ios: return .apns
        case .web: return .webpush
        }
    }
}

/// FCM message priority.
public enum FCMPriority: String, Sendable, CaseIterable {
    /// Delivered at once, waking a dozing device.
    case high
    /// Waits for the device's next doze maintenance window.
    case normal
}

/// Whether FCM hints carry a collapse key.
public enum FCMCollapse: String, Sendable, CaseIterable {
    /// Non-collapsible: every hint is stored while the device is offline, up to the limit.
    case none
    /// The account is the collapse key: a newer stored hint replaces an older one of the same account.
    case account
}
