import Foundation

/// The run's shared time: every process of a run has the same epoch (wall µs) and scale, so simulated time
/// (seconds since the epoch, `scale` simulated seconds per real second) agrees across processes.
public struct SimClock: Sendable, Equatable {
    /// Wall-clock µs since the Unix epoch at simulated time 0.
    public var epochMicros: Int64
    /// Simulated seconds per real second (3600: one real second is one simulated hour).
    public var scale: Double

    public init(epochMicros: Int64, scale: Double) {
        self.epochMicros = epochMicros
        self.scale = scale
    }

    /// A clock whose epoch is now.
    public static func startingNow(scale: Double) -> SimClock {
        SimClock(epochMicros: SimClock.wallMicros(), scale: scale)
    }

    /// Wall-clock µs since the Unix epoch.
    public static func wallMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
    }

    /// Monotonic ns, for measuring durations.
    public static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Simulated seconds at wall time `wall` (µs).
    public func sim(atWall wall: Int64) -> Double {
        Double(wall - epochMicros) / 1_000_000 * scale
    }

    /// Simulated seconds now.
    public func now() -> Double { sim(atWall: SimClock.wallMicros()) }

    /// Wall µs at simulated second `sim`.
    public func wall(atSim sim: Double) -> Int64 {
        epochMicros + Int64((sim / scale) * 1_000_000)
    }

    /// Real seconds that `simSeconds` of simulated time take.
    public func realSeconds(_ simSeconds: Double) -> Double { simSeconds / scale }
}
