/// How a role's process dies, one value for the three drivers (server, broker, device): the crash points armed in it
/// (`--crash-at`, control `crashAt`) and whether it has died. No IO: at an armed point the driver tells its IO, where a
/// real process exits and the simulation marks it dead, and then calls `die`, so nothing after it is carried out.
public struct Mortality: Sendable {
    public var crashPoints = CrashPoints()
    public private(set) var killed = false

    /// Thrown where the process died in the middle of a step; the driver's step ends there.
    public struct Killed: Error {
        public init() {}
    }

    public init(armed: [ArmedCrash] = []) {
        for item in armed { crashPoints.arm(item.point, nth: item.nth) }
    }

    /// Counts one occurrence of `point` with `work` in flight (`CrashPoints.reach`); the occurrence number when this
    /// one kills the process.
    public mutating func fires(_ point: CrashPoint, work: Int) -> Int? { crashPoints.reach(point, work: work) }

    /// The process dies here: marked dead, and `Killed` thrown.
    public mutating func die() throws -> Never {
        killed = true
        throw Killed()
    }

    /// Marked dead without a throw: killed from outside (the simulation's `kill`), or a step that failed as it died.
    public mutating func markKilled() { killed = true }

    /// Before each directive: throws `Killed` once the process has died.
    public func alive() throws {
        if killed { throw Killed() }
    }
}
