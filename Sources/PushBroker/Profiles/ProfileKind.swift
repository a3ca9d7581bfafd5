/// The push services the broker can imitate; `ProfileSettings` says which one each platform uses.
public enum ProfileKind: String, Sendable, CaseIterable {
    case apns, fcm, webpush
}
