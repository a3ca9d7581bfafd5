/// FCM message priority, as the app server chooses it.
public enum FCMPriority: String, Sendable, CaseIterable {
    /// Delivered at once, waking a dozing device.
    case high
    /// Waits for the device's next doze maintenance window.
    case normal
    /// Per message: high for a notice that brings a new draft, which the app shows as a notification the user sees,
    /// normal for every other change. FCM's guidance: high priority only for time-sensitive, user-visible messages.
    /// FCM does not demote what leads to a visible notification, so `fcmDemoteAfter` never counts these.
    case visible
}
