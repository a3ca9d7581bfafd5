import Testing
@testable import SyncDevice

/// A pool's ticks with a clock of the test's own: a turn ticks what it received for and is due; a sweep, when some
/// device's wake or idle tick has come, ticks what is due; no turn in between looks at the others.
@Suite struct PoolTicksTests {
    static let ms: UInt64 = 1_000_000
    static let order = ["a", "b", "c"]

    /// A pool past its first sweep at 0 ms, where every device said its next wake is `wakes[id]` ms away.
    static func swept(wakes: [String: Int]) -> PoolTicks {
        var ticks = PoolTicks()
        let (ids, sweeping) = ticks.plan(wall: 0, forced: false, touched: [], order: order) { _ in false }
        #expect(sweeping && ids == order, "the first turn sweeps and ticks every device (never ticked: stale)")
        for id in order { ticks.wakes(id, inMs: wakes[id] ?? 100, wall: 0) }
        return ticks
    }

    @Test("between sweeps a turn ticks only the devices it received for that are due, and asks no other")
    func betweenSweeps() {
        var ticks = Self.swept(wakes: ["a": 50, "b": 80, "c": 100])
        var asked: [String] = []
        let (ids, sweeping) = ticks.plan(wall: 10 * Self.ms, forced: false, touched: ["b", "c"], order: Self.order) {
            asked.append($0)
            return $0 == "b"
        }
        #expect(!sweeping && ids == ["b"] && asked == ["b", "c"], "\(ids) \(asked)")
        #expect(ticks.lastTick["c"] == 0, "c received something but was not due: not ticked")
        #expect(ticks.timeoutMs(wall: 10 * Self.ms) == 40, "the soonest wake, a's at 50 ms")
    }

    @Test("a device's wake is kept without any message: the sweep at its time ticks it")
    func dueWithoutMessages() {
        var ticks = Self.swept(wakes: ["a": 100, "b": 30, "c": 100])
        // Before b's wake: nothing is ticked, nothing asked.
        #expect(ticks.plan(wall: 29 * Self.ms, forced: false, touched: [], order: Self.order) { _ in true }.ids
            .isEmpty)
        let (ids, sweeping) = ticks.plan(wall: 30 * Self.ms, forced: false, touched: [], order: Self.order) {
            $0 == "b"
        }
        #expect(sweeping && ids == ["b"], "\(ids)")
    }

    @Test("a wake brought nearer by a turn's tick moves the next sweep; one moved away only makes it early")
    func wakeMoves() {
        var ticks = Self.swept(wakes: ["a": 100, "b": 100, "c": 100])
        _ = ticks.plan(wall: 5 * Self.ms, forced: false, touched: ["c"], order: Self.order) { _ in false }
        ticks.wakes("c", inMs: 5, wall: 5 * Self.ms)
        #expect(ticks.sweepAt == 10 * Self.ms)
        ticks.wakes("c", inMs: 90, wall: 6 * Self.ms)
        #expect(ticks.sweepAt == 10 * Self.ms)
    }

    @Test("a control command forces a sweep; an idle device is ticked after a second without one")
    func forcedAndIdle() {
        var ticks = Self.swept(wakes: [:])
        let forced = ticks.plan(wall: 1 * Self.ms, forced: true, touched: [], order: Self.order) { $0 == "a" }
        #expect(forced.sweeping && forced.ids == ["a"])
        // a was ticked at 1 ms, b and c at 0: at 1 s b and c are stale, a is not.
        for id in Self.order { ticks.wakes(id, inMs: 100_000, wall: 1 * Self.ms) }
        #expect(ticks.sweepAt == PoolTicks.maxWaitNanos + Self.ms, "at most 100 ms between sweeps")
        let idle = ticks.plan(wall: PoolTicks.idleTickNanos, forced: true, touched: [], order: Self.order) { _ in
            false
        }
        #expect(idle.ids == ["b", "c"], "\(idle.ids)")
    }

    @Test("the wait is the ms to the next sweep, rounded up, never over 100, 0 when it is due")
    func timeout() {
        let ticks = Self.swept(wakes: ["a": 7, "b": 100, "c": 100])
        #expect(ticks.timeoutMs(wall: 0) == 7)
        #expect(ticks.timeoutMs(wall: 6 * Self.ms + 1) == 1)
        #expect(ticks.timeoutMs(wall: 7 * Self.ms) == 0)
        #expect(PoolTicks().timeoutMs(wall: 5) == 0)
    }
}
