/// Whether FCM hints carry a collapse key.
public enum FCMCollapse: String, Sendable, CaseIterable {
    /// Non-collapsible: every hint is stored while the device is offline, up to the limit.
    case none
    /// The account is the collapse key: a newer stored hint replaces an older one of the same account.
    case account
}
