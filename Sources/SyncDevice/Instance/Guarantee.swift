/// What a platform scheduler can promise for the sync job (seed 000), reported from measurement, never from the
/// request: a caller asking for 15 minutes and receiving `opportunistic(7h 41m)` can make a real decision.
public enum Guarantee: Sendable, Equatable {
    /// Will run, eventually, repeatedly (Android WorkManager). `typical` is this device's measured median gap, nil
    /// before it has two passes.
    case periodic(minimum: Double, typical: Double?)
    /// May run when the system grants a window (iOS). `observedMedianGap` is measured, nil before any history.
    case opportunistic(observedMedianGap: Double?)
    /// Runs only while the app is in the foreground, plus the listed event triggers (web; iOS with refresh off).
    case foregroundOnly(triggers: [Trigger], reason: String?)

    public var kind: String {
        switch self {
        case .periodic: return "periodic"
        case .opportunistic: return "opportunistic"
        case .foregroundOnly: return "foregroundOnly"
        }
    }

    /// The median gap between consecutive times (simulated seconds), nil with fewer than two.
    public static func medianGap(_ times: [Double]) -> Double? {
        let sorted = times.sorted()
        guard sorted.count >= 2 else { return nil }
        let gaps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.sorted()
        let middle = gaps.count / 2
        return gaps.count % 2 == 1 ? gaps[middle] : (gaps[middle - 1] + gaps[middle]) / 2
    }
}
