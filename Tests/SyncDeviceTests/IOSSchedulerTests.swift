import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The iOS BGTaskScheduler model, through the pure instance with a fake clock (docs/DEVICE.md lists the rules).
@Suite struct IOSSchedulerTests {
    static let day = 86_400.0

    func backgroundSettings(opensPerDay: Double = 6) -> DeviceSettings {
        var settings = DeviceSettings()
        settings.startState = .background
        settings.opensPerDay = opensPerDay
        return settings
    }

    @Test func aForceQuitDeviceGetsNoWindowsAndNoHintsUntilOpened() throws {
        let h = try DeviceHarness(platform: .ios, settings: backgroundSettings(opensPerDay: 12))
        h.start()
        h.advance(by: 2 * Self.day)
        let before = h.passes(.opportunistic).count
        #expect(before > 0)

        h.lifecycle(.forceQuit)
        let passesAtQuit = h.passes.count
        h.advance(by: 7 * Self.day)
        h.hint("h1", head: 0)
        #expect(h.passes.count == passesAtQuit)
        #expect(h.events("window.granted").count == before)
        #expect(h.events("hint.ignored").last?["reason"]?.stringValue?.contains("force quit") == true)

        h.lifecycle(.open)
        #expect(h.passes.last?.trigger == .foreground)
        h.lifecycle(.background)
        h.advance(by: 2 * Self.day)
        #expect(h.passes(.opportunistic).count > before)
    }

    /// The expiration handler is wired (the default): the cut-off is handled, so it costs no budget (the penalty
    /// without a handler: DesignSwitchTests.withoutAnExpirationHandlerTheTaskIsKilledAndTheBudgetShrinks).
    @Test func aWindowThatExpiresMidPassLosesNothingAndKeepsTheBudget() throws {
        var settings = backgroundSettings(opensPerDay: 12)
        settings.replyTimeoutMs = 120_000
        let h = try DeviceHarness(platform: .ios, settings: settings)
        h.start()
        let saved = try h.edit("d1", title: "written on the train")  // in the background: no pass yet
        #expect(try h.status(saved.key) == .savedOnDevice)
        // The server is slow: the window's 30 s run out while the push waits for its reply.
        h.hold = { if case .push = $0 { return true } else { return false } }
        while h.passes(.opportunistic).isEmpty { h.advance(by: 600) }
        let cut = try #require(h.passes(.opportunistic).first)
        #expect(cut.cutOff)
        // 30 s less the execution charged for sending the op (opCostSec).
        #expect(abs((cut.ended ?? .nan) - cut.started - (30 - DeviceSettings().opCostSec)) < 1e-9)
        #expect(try h.status(saved.key) == .confirmationDelayed)
        #expect(h.events("ios.window.expired").first?["handled"] == true)
        #expect(h.events("budget.shrunk").isEmpty)
        if case let ios as IOSScheduler = h.instance.scheduler { #expect(ios.budgetFactor == 1) }

        // The slow server did apply the push; its reply is long stale. The next launch settles the op, once.
        h.releaseHeld()
        #expect(h.events("reply.stale").count == 1)
        h.lifecycle(.open)
        #expect(try h.status(saved.key) == .completed)
        #expect(h.server.applications(of: saved.key) == 1)
        #expect(try h.ledger.drafts().first?.title == "written on the train")
    }

    @Test func aWindowCutOffBetweenPagesPullsTheRestNextTime() throws {
        var settings = backgroundSettings(opensPerDay: 12)
        settings.pageLimit = 3
        settings.replyTimeoutMs = 120_000
        let h = try DeviceHarness(platform: .ios, settings: settings)
        h.start()
        for index in 1...8 { _ = h.server.remoteEdit(draft: "d\(index)", title: "t\(index)") }
        var pages = 0
        h.loseReply = {
            guard case .page = $0 else { return false }
            pages += 1
            return pages == 2  // the second page never comes back in this window
        }
        while h.passes(.opportunistic).isEmpty { h.advance(by: 600) }
        #expect(h.passes(.opportunistic).first?.cutOff == true)
        #expect(h.instance.cursor == 3)
        #expect(try h.ledger.cursor() == 3)
        h.loseReply = { _ in false }
        h.lifecycle(.open)
        #expect(h.instance.cursor == 8)
        let seqs = h.events("change.applied").compactMap { $0["seq"]?.intValue }
        #expect(seqs == Array(1...8))
    }

    @Test func theGuaranteeReportsTheObservedMedianNotTheRequest() throws {
        let h = try DeviceHarness(platform: .ios, settings: backgroundSettings(opensPerDay: 2))
        h.start()
        #expect(h.instance.guarantee == .opportunistic(observedMedianGap: nil))
        #expect(h.events("guarantee").first?["observedMedianGapSec"] == nil)
        h.advance(by: 10 * Self.day)
        let windows = h.passes(.opportunistic).map(\.started)
        #expect(windows.count >= 5)
        // Foreground passes and hints do not count: the guarantee is what the scheduler itself delivers.
        h.lifecycle(.open)
        h.lifecycle(.background)
        let measured = try #require(Guarantee.medianGap(windows))
        #expect(h.instance.guarantee == .opportunistic(observedMedianGap: measured))
        #expect(measured != h.instance.settings.desiredIntervalSec)
        #expect(measured > 3_600)  // two opens a day buy about a dozen windows a day, not one every 15 minutes
        h.lifecycle(.close)
        h.lifecycle(.open)  // a launch registers the job again: the event carries the measured gap
        #expect(h.events("guarantee").last?["observedMedianGapSec"]?.doubleValue != nil)
    }

    @Test func refreshOffMakesRegisteringUnavailableAndTheGuaranteeForegroundOnly() throws {
        let h = try DeviceHarness(platform: .ios, settings: backgroundSettings(opensPerDay: 12))
        h.start()
        h.lifecycle(.refresh(on: false))
        #expect(h.instance.guarantee.kind == "foregroundOnly")
        #expect(h.events("guarantee").last?["kind"] == "foregroundOnly")
        let windows = h.events("window.granted").count
        h.advance(by: 5 * Self.day)
        #expect(h.events("window.granted").count == windows)
        h.hint("h1", head: 0)
        #expect(h.events("hint.ignored").count == 1)
        h.lifecycle(.close)
        h.lifecycle(.open)
        #expect(h.events("schedule.unavailable").count == 1)
        h.lifecycle(.refresh(on: true))
        #expect(h.events("schedule.submitted").count >= 2)
        #expect(h.instance.guarantee.kind == "opportunistic")
    }

    @Test func earliestBeginDateIsOnlyAFloor() throws {
        var settings = backgroundSettings(opensPerDay: 48)
        settings.desiredIntervalSec = 6 * 3_600
        let h = try DeviceHarness(platform: .ios, settings: settings)
        h.start()
        h.advance(by: 10 * Self.day)
        let starts = h.passes(.opportunistic).map(\.started)
        #expect(starts.count >= 10)
        #expect(starts.first! >= 6 * 3_600)
        // Each window is at least the floor after the last (the handler resubmits first), and later than asked.
        let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 6 * 3_600 })
        #expect(gaps.contains { $0 > 6 * 3_600 + 60 })
    }

    @Test func theBudgetFollowsEngagementAndCharging() throws {
        func windows(opensPerDay: Double, charging: Bool) throws -> Int {
            var settings = backgroundSettings(opensPerDay: opensPerDay)
            settings.charging = charging
            let h = try DeviceHarness(platform: .ios, settings: settings, seed: 11)
            h.start()
            h.advance(by: 14 * Self.day)
            return h.passes(.opportunistic).count
        }
        let rare = try windows(opensPerDay: 0.3, charging: false)
        let daily = try windows(opensPerDay: 3, charging: false)
        let dailyCharging = try windows(opensPerDay: 3, charging: true)
        #expect(rare < daily)
        #expect(daily < dailyCharging)
        #expect(try windows(opensPerDay: 0, charging: false) == 0)
    }

    /// The app in the background, hinted while its server answers nothing: the push pass can only wait.
    func hintedWhileTheServerIsSilent(_ settings: DeviceSettings) throws -> DeviceHarness {
        let h = try DeviceHarness(platform: .ios, settings: settings)
        h.start()
        h.serverAnswers = false
        h.hint("h1", head: 1)
        return h
    }

    @Test func aPushInTheBackgroundRunsForAtMostTheWindow() throws {
        var settings = backgroundSettings()
        settings.replyTimeoutMs = 120_000
        let h = try hintedWhileTheServerIsSilent(settings)
        h.advance(by: 29.5)
        #expect(h.instance.passRunning)
        #expect(h.instance.pass?.deadline == 30)
        h.advance(by: 1)
        #expect(h.passes.last?.cutOff == true)
        #expect(h.passes.last?.outcome == .cutOff)
    }

    @Test func theWindowIsMeasuredOnTheExecutionClock() throws {
        // At time scale 7200 a pass that does 5 ms of real work spans 36 simulated seconds.
        func cutOffAfter36SimulatedSeconds(_ clock: ExecutionClock) throws -> Bool {
            var settings = backgroundSettings()
            settings.timeScale = 7_200
            settings.executionClock = clock
            let h = try hintedWhileTheServerIsSilent(settings)
            h.advance(by: 36)
            return h.passes.last?.cutOff ?? false
        }
        #expect(try !cutOffAfter36SimulatedSeconds(.real))
        #expect(try cutOffAfter36SimulatedSeconds(.simulated))
    }
}
