import LabKit
import Testing

@Suite struct TokenThrottleTests {
    let names = TokenThrottle.names(connection: "c1", user: "laptop")
    let second: UInt64 = 1_000_000_000

    @Test func aBurstOfWrongTokensThenOneASecond() {
        var throttle = TokenThrottle()
        for _ in 0..<5 {
            #expect(throttle.verdict(names, now: 0) == .check)
            throttle.failed(names, now: 0)
        }
        #expect(throttle.verdict(names, now: 0) == .refuse(announce: true))
        #expect(throttle.verdict(names, now: second / 2) == .refuse(announce: false))
        #expect(throttle.verdict(names, now: second) == .check)
        throttle.failed(names, now: second)
        #expect(throttle.verdict(names, now: second) == .refuse(announce: true), "a new episode is announced")
    }

    @Test func theKeyIsSharedAcrossConnectionsAndOthersAreFree() {
        var throttle = TokenThrottle()
        for _ in 0..<5 { throttle.failed(names, now: 0) }
        let sameKey = TokenThrottle.names(connection: "c2", user: "laptop")
        #expect(throttle.verdict(sameKey, now: 0) == .refuse(announce: true))
        #expect(throttle.verdict(TokenThrottle.names(connection: "c3", user: "pixel"), now: 0) == .check)
        // Without a key (NULL), only the connection counts.
        #expect(throttle.verdict(TokenThrottle.names(connection: "c4", user: nil), now: 0) == .check)
    }

    @Test func rightTokensTakeNothing() {
        var throttle = TokenThrottle()
        for _ in 0..<100 { #expect(throttle.verdict(names, now: 0) == .check) }
    }
}
