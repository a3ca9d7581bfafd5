import PushBroker
import SyncProtocol
import Testing

/// The apns profile's rules, through the pure instance with a fake clock.
@Suite struct APNsProfileTests {
    @Test func offlineDeviceHoldsOneHintAndANewerOneReplacesIt() {
        var driver = InstanceDriver(registered: "iphone", offline: true)
        for head in 1...3 { driver.notice(head: head) }

        #expect(driver.received["iphone"] == nil)
        let coalesced = driver.events("hint.coalesced")
        #expect(coalesced.map { $0["hint"]?.stringValue } == ["h-1", "h-2"])
        #expect(coalesced.map { $0["by"]?.stringValue } == ["h-2", "h-3"])
        #expect(driver.instance.counters(for: "iphone")?.held == 1)

        driver.advance(to: 60)
        driver.state("iphone", online: true)
        #expect(driver.received["iphone"] == [Hint(hint: "h-3", account: "acme", head: 3)])
        let counters = driver.instance.counters
        #expect(counters.accepted == 3 && counters.coalesced == 2 && counters.delivered == 1 && counters.held == 0)
        #expect(counters.balances)
    }

    @Test func lowPowerHoldsBackgroundHintsButNotForegroundOnes() {
        var driver = InstanceDriver(registered: "iphone")
        driver.state("iphone", online: true, app: .background, doze: true)
        driver.notice(head: 1)
        #expect(driver.events("hint.held").last?["reason"] == "low-power")
        #expect(driver.received["iphone"] == nil)

        driver.state("iphone", online: true, app: .foreground, doze: true)
        #expect(driver.hintIDs("iphone") == ["h-1"])
        driver.notice(head: 2)
        #expect(driver.hintIDs("iphone") == ["h-1", "h-2"])
    }

    @Test func forceQuitDiscardsEveryHintUntilTheAppIsOpened() {
        var driver = InstanceDriver(registered: "iphone", offline: true)
        driver.notice(head: 1)
        // The held hint goes when the user force-quits, and so does every later one.
        driver.state("iphone", online: false, app: .forceQuit)
        driver.notice(head: 2)
        driver.state("iphone", online: true, app: .forceQuit)
        driver.notice(head: 3)
        #expect(driver.events("hint.discarded").map { $0["hint"]?.stringValue } == ["h-1", "h-2", "h-3"])
        #expect(driver.events("hint.discarded").allSatisfy { $0["reason"] == "force-quit" })
        #expect(driver.received["iphone"] == nil)

        driver.state("iphone", online: true, app: .foreground)
        driver.notice(head: 4)
        #expect(driver.hintIDs("iphone") == ["h-4"])
        #expect(driver.instance.counters.discarded == 3)
        #expect(driver.instance.counters.balances)
    }

    @Test func backgroundHintsAreThrottledToThreeInAnySlidingHour() {
        var driver = InstanceDriver(registered: "iphone")
        for (index, time) in [0.0, 600, 1200, 1800, 2400].enumerated() {
            driver.advance(to: time)
            driver.notice(head: index + 1)
        }
        #expect(driver.hintIDs("iphone") == ["h-1", "h-2", "h-3"])
        #expect(driver.events("hint.throttled").map { $0["hint"]?.stringValue } == ["h-4", "h-5"])

        // One hour after the first delivery, one slot is free again; the second frees at 4200.
        driver.advance(to: 3600)
        driver.notice(head: 6)
        driver.notice(head: 7)
        #expect(driver.hintIDs("iphone") == ["h-1", "h-2", "h-3", "h-6"])
        #expect(driver.instance.counters.throttled == 3)
        #expect(driver.instance.counters.balances)
    }

    @Test func foregroundHintsAreNotThrottled() {
        var driver = InstanceDriver(registered: "iphone")
        driver.state("iphone", app: .foreground)
        for head in 1...20 { driver.notice(head: head) }
        #expect(driver.received["iphone"]?.count == 20)
        #expect(driver.instance.counters.throttled == 0)
    }

    @Test func throttleLimitIsAFlag() {
        let profiles = ProfileSettings.with { $0.apnsThrottlePerHour = 1 }
        var driver = InstanceDriver(registered: "iphone", profiles: profiles)
        for head in 1...3 { driver.notice(head: head) }
        #expect(driver.hintIDs("iphone") == ["h-1"])
        #expect(driver.instance.counters.throttled == 2)
    }

    @Test func backgroundRefreshOffDiscardsBackgroundHints() {
        var driver = InstanceDriver(registered: "iphone")
        driver.state("iphone", app: .background, refreshOff: true)
        driver.notice(head: 1)
        #expect(driver.events("hint.discarded").first?["reason"] == "refresh-off")
        driver.state("iphone", app: .foreground, refreshOff: true)
        driver.notice(head: 2)
        #expect(driver.hintIDs("iphone") == ["h-2"])
    }
}
