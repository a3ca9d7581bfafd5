@testable import PushBroker
import SyncProtocol
import Testing

/// Seeded chaos on top of the profiles, through the pure instance.
@Suite struct ChaosTests {
    /// A registered pixel after notices for heads 1…`count` under `chaos`.
    func noticed(_ count: Int, chaos: ChaosSettings, seed: UInt64) -> InstanceDriver {
        var driver = InstanceDriver(registered: "pixel", chaos: chaos, seed: seed)
        for head in 1...count { driver.notice(head: head) }
        return driver
    }

    @Test func lossDropsAboutTheGivenShareAndEveryHintIsAccounted() {
        let driver = noticed(5000, chaos: ChaosSettings(loss: 0.3), seed: 11)
        let counters = driver.instance.counters
        #expect(counters.accepted == 5000)
        #expect(abs(Double(counters.dropped) / 5000 - 0.3) < 0.03)
        #expect(driver.events("hint.dropped").allSatisfy { $0["reason"] == "chaos-loss" })
        #expect(driver.received["pixel"]?.count == counters.delivered)
        #expect(counters.balances)
    }

    @Test func duplicatesAreSentTwiceAndCountedBeside() {
        let driver = noticed(5000, chaos: ChaosSettings(duplicate: 0.2), seed: 12)
        let counters = driver.instance.counters
        #expect(counters.delivered == 5000)
        #expect(abs(Double(counters.duplicated) / 5000 - 0.2) < 0.03)
        #expect(driver.received["pixel"]?.count == counters.delivered + counters.duplicated)
        #expect(counters.balances)
    }

    @Test func constantDelayHoldsAHintForThatManySimulatedSeconds() {
        var driver = InstanceDriver(registered: "pixel", chaos: ChaosSettings(delayKind: .constant, delaySec: 5))
        driver.notice(head: 1)
        #expect(driver.events("hint.held").first?["reason"] == "chaos-delay")
        #expect(driver.instance.counters.held == 1)
        driver.advance(to: 4.9)
        #expect(driver.received["pixel"] == nil)
        driver.advance(to: 5)
        #expect(driver.hintIDs("pixel") == ["h-1"])
        #expect(driver.events("hint.delivered").first?["waitedSec"] == 5)
    }

    @Test func exponentialDelaysHaveTheGivenMean() {
        var driver = noticed(2000, chaos: ChaosSettings(delayKind: .exponential, delaySec: 10), seed: 3)
        driver.advance(to: 100_000)
        let waits = driver.events("hint.delivered").compactMap { $0["waitedSec"]?.doubleValue }
        #expect(waits.count == 2000)
        let mean = waits.reduce(0, +) / Double(waits.count)
        #expect(mean > 9 && mean < 11)
        #expect(driver.instance.counters.balances)
    }

    @Test func reorderedHintGoesRightAfterTheNextOneOrAtTheWindow() {
        var driver = InstanceDriver(registered: "pixel", "laptop")
        #expect(driver.control("chaos", ["reorder": 1, "device": "pixel"])?.ok == true)
        // Devices are served in id order: laptop gets h-1, pixel h-2.
        driver.notice(head: 1)
        #expect(driver.hintIDs("laptop") == ["h-1"])
        #expect(driver.received["pixel"] == nil)
        #expect(driver.control("chaos", ["off": true, "device": "pixel"])?.ok == true)
        driver.notice(head: 2)
        #expect(driver.hintIDs("pixel") == ["h-4", "h-2"])

        // Held back with nothing to overtake it: it goes when the reorder window closes.
        #expect(driver.control("chaos", ["reorder": 1])?.ok == true)
        driver.notice(head: 3)
        driver.advance(to: 59)
        #expect(driver.hintIDs("pixel") == ["h-4", "h-2"])
        driver.advance(to: 60)
        #expect(driver.hintIDs("pixel") == ["h-4", "h-2", "h-6"])
        #expect(driver.hintIDs("laptop") == ["h-1", "h-3", "h-5"])
        #expect(driver.instance.counters.balances)
    }

    @Test func chaosCommandSetsGlobalAndPerDeviceSettingsAndOffClearsThem() {
        var driver = InstanceDriver(registered: "pixel", "laptop")
        #expect(driver.control("chaos", ["loss": 1, "device": "pixel"])?.ok == true)
        driver.notice(head: 1)
        #expect(driver.received["pixel"] == nil)
        #expect(driver.hintIDs("laptop") == ["h-1"])
        #expect(driver.events("fault.set").last?["device"] == "pixel")

        #expect(driver.control("chaos", ["off": true])?.ok == true)
        #expect(driver.instance.chaosByDevice.isEmpty)
        driver.notice(head: 2)
        #expect(driver.hintIDs("pixel") == ["h-4"])

        #expect(driver.control("chaos", ["duplicate": 1, "delayKind": "uniform", "delaySec": 2])?.ok == true)
        #expect(driver.instance.chaos == ChaosSettings(duplicate: 1, delayKind: .uniform, delaySec: 2))
    }

    @Test func badChaosArgumentsAreRefusedAndChangeNothing() {
        var driver = InstanceDriver()
        let cases: [[String: JSONValue]] = [
            ["loss": 1.5], ["loss": "lots"], ["delayKind": "sometimes"], ["delaySec": -1], ["speed": 3],
            ["device": "nobody", "loss": 0.5], ["off": true, "loss": 0.2],
        ]
        for args in cases {
            let ack = driver.control("chaos", args)
            #expect(ack?.ok == false, "accepted \(args)")
            #expect(ack?.detail.isEmpty == false)
        }
        #expect(driver.instance.chaos == .off)
        #expect(driver.events("fault.set").isEmpty)
    }
}
