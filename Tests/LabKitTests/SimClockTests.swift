import LabKit
import Testing

@Suite("SimClock")
struct SimClockTests {
    @Test("wall and simulated time convert both ways at the scale")
    func conversions() {
        let epoch: Int64 = 1_700_000_000_000_000
        let hourly = SimClock(epochMicros: epoch, scale: 3_600)
        #expect(hourly.sim(atWall: epoch) == 0)
        #expect(hourly.sim(atWall: epoch + 1_000_000) == 3_600)
        #expect(hourly.sim(atWall: epoch + 250_000) == 900)
        #expect(hourly.sim(atWall: epoch - 1_000_000) == -3_600)
        #expect(hourly.wall(atSim: 3_600) == epoch + 1_000_000)
        #expect(hourly.wall(atSim: 7 * 86_400) == epoch + 168_000_000)
        #expect(hourly.realSeconds(7 * 86_400) == 168)
        for wall in stride(from: epoch, to: epoch + 10_000_000, by: 1_234_567) {
            #expect(hourly.wall(atSim: hourly.sim(atWall: wall)) == wall)
        }

        let realTime = SimClock(epochMicros: epoch, scale: 1)
        #expect(realTime.sim(atWall: epoch + 1_500_000) == 1.5)
        #expect(realTime.realSeconds(90) == 90)
    }

    @Test("a clock starting now has its epoch between two readings of the wall clock")
    func startingNow() {
        let before = SimClock.wallMicros()
        let clock = SimClock.startingNow(scale: 60)
        let after = SimClock.wallMicros()
        #expect((before...after).contains(clock.epochMicros))
        #expect(clock.scale == 60)
        #expect(clock.now() >= 0)
        // Well after 2020 and in microseconds.
        #expect(before > 1_577_836_800_000_000)
    }

    @Test("the monotonic clock never goes back")
    func monotonic() {
        var last = SimClock.monotonicNanos()
        for _ in 0..<10_000 {
            let now = SimClock.monotonicNanos()
            #expect(now >= last)
            last = now
        }
    }
}
