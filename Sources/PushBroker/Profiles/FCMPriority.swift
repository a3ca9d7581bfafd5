/// FCM message priority.
public enum FCMPriority: String, Sendable, CaseIterable {
    /// Delivered at once, waking a dozing device.
    case high
    /// Waits for the device's next doze maintenance window.
    case normal
}
