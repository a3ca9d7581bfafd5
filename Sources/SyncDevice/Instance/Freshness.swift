/// How old the replica's data is (seed 001): read from the last successful sync, never from a promise about the
/// next one.
public enum Freshness: Sendable, Equatable {
    case neverSynced
    case current(syncedAt: Double)
    case stale(syncedAt: Double, age: Double)

    /// The freshness at simulated second `now` of data last synced at `lastSuccessfulSync`, against `budget` seconds.
    public static func at(_ now: Double, lastSuccessfulSync: Double?, budget: Double) -> Freshness {
        guard let syncedAt = lastSuccessfulSync else { return .neverSynced }
        let age = max(0, now - syncedAt)
        return age <= budget ? .current(syncedAt: syncedAt) : .stale(syncedAt: syncedAt, age: age)
    }

    public var kind: String {
        switch self {
        case .neverSynced: return "neverSynced"
        case .current: return "current"
        case .stale: return "stale"
        }
    }
}
