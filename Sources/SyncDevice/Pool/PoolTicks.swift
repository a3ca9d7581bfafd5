/// Which devices a turn of a pool's loop ticks, and when the loop must next look at every device. A value with no
/// IO: `DevicePool` gives it the monotonic clock and what each device says of its next wake; `PoolTicksTests` drives
/// it with a clock of its own.
///
/// A turn ticks the devices it received for whose wake has come: what a device received was handled as it came, and an
/// instance needs a tick only at its `nextWake` (the simulation gives it no others). Only at a sweep — when the
/// soonest wake of any device has come, or an idle tick is owed, or a control command may have changed any device —
/// does it look at every device and tick those that are due or have not been ticked for `idleTickNanos`. Looking at
/// every device on every turn made a pass cost O(devices in the pool).
struct PoolTicks {
    /// An idle device's tick at least this often. A device in its own process wakes every 100 ms at most, but only to
    /// notice signals: its instance needs ticks at `nextWake` alone (the simulation gives it no others), and ticking
    /// 250 idle devices every 100 ms was most of an idle pool's work (10,000 devices: 100,000 ticks a second).
    static let idleTickNanos: UInt64 = 1_000_000_000
    /// The longest a pool waits between two sweeps, as a device in its own process waits at most 100 ms.
    static let maxWaitNanos: UInt64 = 100_000_000

    /// Monotonic ns of the next sweep; 0 before the first, so the first turn sweeps.
    private(set) var sweepAt: UInt64 = 0
    /// Monotonic ns each device was last ticked.
    private(set) var lastTick: [String: UInt64] = [:]

    /// The devices to tick this turn, in `order`: the `touched` ones that are `due`, and at a sweep (`sweepAt`
    /// reached, or `forced`) every device that is `due` or stale. Records their tick. After ticking them, tell `wakes`
    /// of each device the turn looked at: every device at a sweep (`sweeping`), the touched ones otherwise.
    mutating func plan(wall: UInt64, forced: Bool, touched: Set<String>, order: [String],
                       due: (String) -> Bool) -> (ids: [String], sweeping: Bool) {
        let sweeping = forced || wall >= sweepAt
        var ids: [String] = []
        if sweeping {
            sweepAt = wall &+ Self.maxWaitNanos
            for id in order where due(id) || stale(id, wall: wall) { ids.append(id) }
        } else {
            // Independent instances: the order does not matter, only that a turn costs what it received.
            ids = touched.sorted().filter(due)
        }
        for id in ids { lastTick[id] = wall }
        return (ids, sweeping)
    }

    /// `id` next needs a tick in `inMs` real ms (its next wake), or at its idle tick: the next sweep comes no later.
    /// A wake that moved further away only makes the next sweep early.
    mutating func wakes(_ id: String, inMs: Int, wall: UInt64) {
        let wake = wall &+ UInt64(max(0, inMs)) * 1_000_000
        sweepAt = min(sweepAt, wake, (lastTick[id] ?? 0) &+ Self.idleTickNanos)
    }

    /// Real ms the loop may wait before the next sweep (at most 100; 0 when it is due).
    func timeoutMs(wall: UInt64) -> Int {
        guard sweepAt > wall else { return 0 }
        return Int(min(Self.maxWaitNanos, sweepAt - wall) + 999_999) / 1_000_000
    }

    /// Never ticked, or not for `idleTickNanos`.
    func stale(_ id: String, wall: UInt64) -> Bool {
        lastTick[id].map { wall &- $0 >= Self.idleTickNanos } ?? true
    }

    /// A device that left the pool.
    mutating func forget(_ id: String) { lastTick[id] = nil }
}
