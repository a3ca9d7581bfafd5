/// What the app does when FCM calls `onDeletedMessages` (it deleted the device's stored messages past its limit).
public enum FCMDeletedMessages: String, Sendable, CaseIterable {
    /// The app syncs in full: the lab sends one resync hint for the account's latest head.
    case handled
    /// The app does nothing: the resync hint is discarded (reason `deleted-messages-ignored`).
    case ignored
}
