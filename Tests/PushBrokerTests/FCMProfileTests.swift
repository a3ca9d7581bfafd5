@testable import PushBroker
import SyncProtocol
import Testing

/// The fcm profile's rules, through the pure instance with a fake clock (and the collapse-key limit on the profile
/// itself, since a device has one account).
@Suite struct FCMProfileTests {
    @Test func offlineDeviceGetsEveryHeldHintInOrderWhenItReturns() {
        var driver = InstanceDriver(registered: "pixel", offline: true)
        for head in 1...100 { driver.notice(head: head) }
        #expect(driver.instance.counters(for: "pixel")?.held == 100)
        driver.state("pixel", online: true)
        #expect(driver.hintIDs("pixel") == (1...100).map { "h-\($0)" })
        #expect(driver.instance.counters.balances)
    }

    @Test func pastOneHundredHeldAllAreDroppedAndOneResyncHintComesOnReturn() {
        var driver = InstanceDriver(registered: "pixel", offline: true)
        for head in 1...101 { driver.notice(head: head) }
        let dropped = driver.events("hint.dropped")
        #expect(dropped.count == 101)
        #expect(dropped.allSatisfy { $0["reason"] == "fcm-overflow" })
        #expect(driver.instance.counters(for: "pixel")?.held == 0)

        // FCM stores again after deleting; the app first hears "messages were deleted", then what is stored.
        driver.notice(head: 102)
        driver.state("pixel", online: true)
        let hints = driver.received["pixel"] ?? []
        #expect(hints.map(\.hint) == ["h-103", "h-102"])
        #expect(hints.first == Hint(hint: "h-103", account: "acme", head: 102))
        #expect(driver.events("hint.accepted").last?["reason"] == "resync")
        let counters = driver.instance.counters
        #expect(counters.accepted == 103 && counters.dropped == 101 && counters.delivered == 2)
        #expect(counters.balances)
    }

    @Test func anAppThatIgnoresDeletedMessagesGetsNoResyncOnlyWhereTheSwitchNamesItsAccount() throws {
        func afterOverflow(deleted: FCMDeletedMessages, accounts: Set<String>?) -> InstanceDriver {
            let profiles = ProfileSettings.with {
                $0.fcmMaxHeld = 2
                $0.fcmDeletedMessages = deleted
                $0.fcmDeletedAccounts = accounts
            }
            var driver = InstanceDriver(registered: "pixel", offline: true, profiles: profiles)
            for head in 1...3 { driver.notice(head: head) }
            driver.state("pixel", online: true)
            return driver
        }
        // Ignored: FCM still calls onDeletedMessages (the resync is accepted) but the app drops it; nothing is sent.
        let ignored = afterOverflow(deleted: .ignored, accounts: nil)
        #expect(ignored.hintIDs("pixel").isEmpty)
        #expect(ignored.events("hint.accepted").last?["reason"] == "resync")
        let discarded = ignored.events("hint.discarded")
        #expect(discarded.count == 1 && discarded.allSatisfy { $0["reason"] == "deleted-messages-ignored" })
        #expect(ignored.instance.counters.discarded == 1 && ignored.instance.counters.delivered == 0)
        #expect(ignored.instance.counters.balances)
        #expect(afterOverflow(deleted: .ignored, accounts: ["acme"]).events("hint.discarded").count == 1)
        // Another account named, or the default: pixel's app handles it and gets the resync hint.
        for handled in [afterOverflow(deleted: .ignored, accounts: ["zen"]), afterOverflow(deleted: .handled,
                                                                                         accounts: nil)] {
            #expect(handled.received["pixel"] == [Hint(hint: "h-4", account: "acme", head: 3)])
            #expect(handled.events("hint.discarded").isEmpty)
        }
        let base = ["--listen", "tcp://127.0.0.1:1", "--notices", "tcp://127.0.0.1:2", "--accounts", "a.json"]
        let flags = base + ["--fcm-deleted-messages", "ignored", "--fcm-deleted-accounts", "x,y"]
        let settings = try BrokerCommand.configuration(from: BrokerCommand.spec.parse(flags)).settings
        #expect(settings.profiles.fcmDeletedMessages == .ignored && settings.profiles.fcmDeletedAccounts == ["x", "y"])
    }

    @Test func maxHeldIsAFlag() {
        let profiles = ProfileSettings.with { $0.fcmMaxHeld = 2 }
        var driver = InstanceDriver(registered: "pixel", offline: true, profiles: profiles)
        for head in 1...3 { driver.notice(head: head) }
        #expect(driver.instance.counters.dropped == 3)
    }

    @Test func collapseKeyKeepsOnlyTheNewestHintOfTheAccount() {
        let profiles = ProfileSettings.with { $0.fcmCollapse = .account }
        var driver = InstanceDriver(registered: "pixel", offline: true, profiles: profiles)
        for head in 1...5 { driver.notice(head: head) }
        #expect(driver.events("hint.coalesced").map { $0["by"]?.stringValue } == ["h-2", "h-3", "h-4", "h-5"])
        driver.state("pixel", online: true)
        #expect(driver.hintIDs("pixel") == ["h-5"])
        #expect(driver.instance.counters.balances)
    }

    @Test func atMostFourCollapseKeysAreStored() {
        var settings = ProfileSettings()
        settings.fcmCollapse = .account
        var profile = FCMProfile(settings: settings)
        let offline = DeviceConditions(online: false)
        var decisions: [ProfileDecision] = []
        for (index, account) in ["a", "b", "c", "d", "e"].enumerated() {
            let pending = PendingHint(ref: HintRef(number: index + 1, head: 1), account: account, acceptedAt: 0)
            decisions += profile.offer(pending, offline, now: 0)
        }
        let evicted = PendingHint(ref: HintRef(number: 1, head: 1), account: "a", acceptedAt: 0)
        #expect(decisions.contains(.drop(evicted, reason: "fcm-collapse-limit")))
        #expect(profile.held.map(\.account) == ["b", "c", "d", "e"])
    }

    /// Pixel, registered and dozing from 100 s, doze's maintenance window every hour, `configure`'s profiles.
    static func dozingPixel(_ configure: (inout ProfileSettings) -> Void) -> InstanceDriver {
        var driver = InstanceDriver(registered: "pixel", profiles: ProfileSettings.with {
            $0.dozeWindowSec = 3600
            configure(&$0)
        })
        driver.state("pixel", online: true, doze: true)
        driver.advance(to: 100)
        return driver
    }

    @Test func normalPriorityWaitsForTheNextDozeMaintenanceWindow() {
        var driver = Self.dozingPixel { $0.fcmPriority = .normal }
        driver.notice(head: 1)
        driver.advance(to: 200)
        driver.notice(head: 2)
        #expect(driver.events("hint.held").map { $0["reason"]?.stringValue } == ["doze", "doze"])

        driver.advance(to: 3599)
        #expect(driver.received["pixel"] == nil)
        driver.advance(to: 3600)
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2"])
        #expect(driver.events("hint.delivered").first?["waitedSec"] == 3500)

        // The next window is one interval later.
        driver.advance(to: 4000)
        driver.notice(head: 3)
        driver.advance(to: 7199)
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2"])
        driver.advance(to: 7200)
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2", "h-3"])
    }

    @Test func leavingDozeDeliversWhatWaitedForAWindow() {
        let profiles = ProfileSettings.with { $0.fcmPriority = .normal }
        var driver = InstanceDriver(registered: "pixel", profiles: profiles)
        driver.state("pixel", online: true, doze: true)
        driver.notice(head: 1)
        driver.advance(to: 10)
        driver.state("pixel", online: true, app: .background, doze: false)
        #expect(driver.hintIDs("pixel") == ["h-1"])
    }

    @Test func highPriorityWakesADozingDevice() {
        var driver = InstanceDriver(registered: "pixel")  // fcm-priority high is the default
        driver.state("pixel", online: true, doze: true)
        driver.notice(head: 1)
        #expect(driver.hintIDs("pixel") == ["h-1"])
    }

    @Test func normalPriorityAppliesOnlyToTheAccountsItNames() throws {
        func dozingPixelGetsAtOnce(priorityAccounts: Set<String>?) -> Bool {
            var profiles = ProfileSettings()
            profiles.fcmPriority = .normal
            profiles.fcmPriorityAccounts = priorityAccounts
            var driver = InstanceDriver(registered: "pixel", profiles: profiles)
            driver.state("pixel", online: true, doze: true)
            driver.notice(head: 1)
            return driver.hintIDs("pixel") == ["h-1"]
        }
        #expect(!dozingPixelGetsAtOnce(priorityAccounts: nil))  // every account: held for a window
        #expect(!dozingPixelGetsAtOnce(priorityAccounts: ["acme"]))
        #expect(dozingPixelGetsAtOnce(priorityAccounts: ["zen"]))  // pixel's account is not named: high
        let base = ["--listen", "tcp://127.0.0.1:1", "--notices", "tcp://127.0.0.1:2", "--accounts", "a.json"]
        let flags = base + ["--fcm-priority", "normal", "--fcm-priority-accounts", "x,y"]
        let settings = try BrokerCommand.configuration(from: BrokerCommand.spec.parse(flags)).settings
        #expect(settings.profiles.fcmPriority == .normal && settings.profiles.fcmPriorityAccounts == ["x", "y"])
    }

    @Test func forceStoppedAppGetsNothingUntilOpened() {
        var driver = InstanceDriver(registered: "pixel", offline: true)
        driver.notice(head: 1)
        driver.state("pixel", online: true, app: .forceQuit)
        driver.notice(head: 2)
        #expect(driver.events("hint.discarded").map { $0["hint"]?.stringValue } == ["h-1", "h-2"])
        driver.state("pixel", online: true, app: .foreground)
        driver.notice(head: 3)
        #expect(driver.hintIDs("pixel") == ["h-3"])
    }

    @Test func highPriorityIsDemotedAfterHintsThatShowNoNotification() throws {
        var driver = Self.dozingPixel { $0.fcmDemoteAfter = 2 }
        driver.notice(head: 1)
        driver.notice(head: 2)
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2"])  // high priority wakes the dozing device twice
        driver.notice(head: 3)
        #expect(driver.events("hint.held").map { $0["reason"]?.stringValue } == ["fcm-demoted"])
        driver.advance(to: 3599)
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2"])
        driver.advance(to: 3600)  // the demoted hint waits for doze's maintenance window, as a normal one would
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2", "h-3"])
        #expect(driver.instance.counters.balances)

        let base = ["--listen", "tcp://127.0.0.1:1", "--notices", "tcp://127.0.0.1:2", "--accounts", "a.json"]
        let settings = try BrokerCommand.configuration(
            from: BrokerCommand.spec.parse(base + ["--fcm-demote-after", "5"])).settings
        #expect(settings.profiles.fcmDemoteAfter == 5)
    }

    @Test func visiblePriorityWakesADozingDeviceForANewDraftOnlyAndIsNeverDemoted() {
        let profiles = ProfileSettings.with {
            $0.fcmPriority = .visible
            $0.fcmDemoteAfter = 1
            $0.dozeWindowSec = 3600
        }
        var driver = InstanceDriver(registered: "pixel", profiles: profiles)
        driver.state("pixel", online: true, doze: false)
        for head in 1...3 { driver.notice(head: head, version: 2) }  // awake: updates go at once, at normal
        driver.state("pixel", online: true, doze: true)
        driver.advance(to: 100)
        driver.notice(head: 4, version: 2)  // an update in doze waits, as a normal-priority message does
        #expect(driver.events("hint.held").map { $0["reason"]?.stringValue } == ["doze"])
        driver.notice(head: 5)  // a new draft goes high and wakes the device
        driver.notice(head: 6)  // and is never demoted: it led to a notification the user saw
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2", "h-3", "h-5", "h-6"])
        driver.advance(to: 3600)
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2", "h-3", "h-5", "h-6", "h-4"])
        #expect(driver.instance.counters.balances)
    }

    @Test func highForEveryChangeIsDemotedWhereVisibleIsNot() {
        func newDraftInDoze(_ priority: FCMPriority) -> [String] {
            var driver = InstanceDriver(registered: "pixel", profiles: ProfileSettings.with {
                $0.fcmPriority = priority
                $0.fcmDemoteAfter = 3
            })
            driver.state("pixel", online: true, doze: false)
            for head in 1...3 { driver.notice(head: head, version: 2) }
            driver.state("pixel", online: true, doze: true)
            driver.notice(head: 4)
            return driver.events("hint.held").compactMap { $0["reason"]?.stringValue }
        }
        #expect(newDraftInDoze(.high) == ["fcm-demoted"])
        #expect(newDraftInDoze(.visible).isEmpty)
    }

    @Test func aDemotedDeviceAwakeStillGetsHintsAtOnce() {
        var driver = InstanceDriver(registered: "pixel", profiles: ProfileSettings.with { $0.fcmDemoteAfter = 1 })
        driver.state("pixel", online: true, doze: false)
        for head in 1...3 { driver.notice(head: head) }
        #expect(driver.hintIDs("pixel") == ["h-1", "h-2", "h-3"])  // demotion only matters in doze
        #expect(driver.events("hint.held").isEmpty)
    }
}
