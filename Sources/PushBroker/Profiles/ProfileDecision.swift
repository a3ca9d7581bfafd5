/// What a delivery profile decided about one hint. The instance turns each into counters, events and sends.
public enum ProfileDecision: Sendable, Equatable {
    /// Send it to the device now.
    case deliver(PendingHint)
    /// Keep it until the device is reachable (`reason`: why it is not).
    case hold(PendingHint, reason: String)
    /// Replaced by a newer hint while held (`by`: the newer one's id).
    case coalesce(PendingHint, by: String)
    /// Over the background budget: not delivered.
    case throttle(PendingHint)
    /// Thrown away because of the app's state (`reason`: `force-quit`, `refresh-off`, …).
    case discard(PendingHint, reason: String)
    /// Lost by the service (`reason`: `fcm-overflow`, `fcm-collapse-limit`, …).
    case drop(PendingHint, reason: String)
    /// Held past its time to live.
    case expire(PendingHint)
    /// The device lost stored hints: send it one new hint for the account's latest head (FCM's deleted messages).
    case resync
    /// The same, to an app that ignores `onDeletedMessages` (`fcmDeletedMessages: ignored`): it is thrown away.
    case resyncIgnored
}
