/// Whether a trigger may run a pass now.
public enum Admission: Sendable, Equatable {
    /// Run, cut off after `limit` seconds of execution (nil: no limit, the app is in the foreground).
    case run(limit: Double?)
    /// Not now, and why.
    case refuse(String)
}
