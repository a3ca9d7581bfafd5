import PushBroker
import SyncProtocol
import Testing

/// The webpush profile's rules, through the pure instance with a fake clock.
@Suite struct WebPushProfileTests {
    @Test func heldHintExpiresPastItsTTLAndAYoungerOneIsDeliveredWhenReachable() {
        var driver = InstanceDriver(registered: "laptop", offline: true)  // webpush-ttl-sec 86400
        driver.notice(head: 1)
        driver.advance(to: 50_000)
        driver.notice(head: 2)
        #expect(driver.instance.counters(for: "laptop")?.held == 2)

        driver.advance(to: 86_399)
        #expect(driver.events("hint.expired").isEmpty)
        driver.advance(to: 86_400)
        #expect(driver.events("hint.expired").map { $0["hint"]?.stringValue } == ["h-1"])

        driver.advance(to: 90_000)
        driver.state("laptop", online: true)
        #expect(driver.hintIDs("laptop") == ["h-2"])
        let counters = driver.instance.counters
        #expect(counters.expired == 1 && counters.delivered == 1 && counters.held == 0 && counters.balances)
    }

    @Test func ttlIsAFlagAndZeroMeansNowOrNever() {
        let profiles = ProfileSettings.with { $0.webpushTTLSec = 0 }
        var driver = InstanceDriver(registered: "laptop", offline: true, profiles: profiles)
        driver.notice(head: 1)
        #expect(driver.events("hint.expired").count == 1)
        driver.state("laptop", online: true)
        #expect(driver.received["laptop"] == nil)
    }

    @Test func closedTabIsReachableWhileOnlineButAStoppedBrowserIsNot() {
        var driver = InstanceDriver(registered: "laptop")
        driver.state("laptop", online: true, app: .closed)
        driver.notice(head: 1)
        #expect(driver.hintIDs("laptop") == ["h-1"])

        driver.state("laptop", online: true, app: .forceQuit)
        driver.notice(head: 2)
        #expect(driver.events("hint.held").last?["reason"] == "browser-not-running")
        driver.advance(to: 100)
        driver.state("laptop", online: true, app: .foreground)
        #expect(driver.hintIDs("laptop") == ["h-1", "h-2"])
    }

    @Test func dozeDoesNotHoldWebPush() {
        var driver = InstanceDriver(registered: "laptop")
        driver.state("laptop", online: true, app: .background, doze: true, refreshOff: true)
        driver.notice(head: 1)
        #expect(driver.hintIDs("laptop") == ["h-1"])
    }
}
