import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The iOS switches of the task's own code (seeds 002 and 004): setTaskCompleted, where the handler is registered,
/// and the user's Background App Refresh setting, through the pure instance with a fake clock. Each test holds the
/// lab's design beside the switch, so a switch that changes nothing fails.
@Suite struct IOSTaskSwitchTests {
    static let day = 86_400.0

    func settings(_ change: (inout DeviceSettings) -> Void = { _ in }) -> DeviceSettings {
        var settings = DeviceSettings()
        settings.startState = .background
        settings.opensPerDay = 12
        change(&settings)
        return settings
    }

    func budget(_ h: DeviceHarness) -> Double? {
        (h.instance.scheduler as? IOSScheduler)?.budgetFactor
    }

    @Test func withoutSetTaskCompletedEveryWindowHalvesTheBudgetThoughItsWorkIsDone() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings { $0.setTaskCompleted = false })
        h.start()
        while h.passes(.opportunistic).count < 3 { h.advance(by: 600) }
        // The passes finished their work; the tasks were never completed.
        #expect(h.passes(.opportunistic).allSatisfy { !$0.cutOff })
        #expect(h.events("ios.task.notCompleted").count == 3)
        #expect(h.events("ios.window.expired").isEmpty)
        let shrunk = h.events("budget.shrunk")
        #expect(shrunk.map { $0["to"]?.doubleValue ?? 0 } == [0.5, 0.25, 0.125])
        #expect(shrunk.allSatisfy { $0["reason"]?.stringValue?.hasPrefix("setTaskCompleted=false") == true })
        #expect(budget(h) == 0.125)
        #expect(h.events("budget.recovered").isEmpty)

        let done = try DeviceHarness(platform: .ios, settings: settings())
        done.start()
        while done.passes(.opportunistic).count < 3 { done.advance(by: 600) }
        #expect(done.events("ios.task.notCompleted").isEmpty && done.events("budget.shrunk").isEmpty)
        #expect(budget(done) == 1)
    }

    @Test func aLateRegisteredHandlerIsFoundMissingAndNothingRunsAgain() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings { $0.taskRegistration = .late })
        h.start()
        #expect(h.events("schedule.submitted").count == 1)  // the request itself is fine
        while h.events("ios.task.noHandler").isEmpty && h.now < 2 * Self.day { h.advance(by: 600) }
        #expect(h.events("ios.task.noHandler").count == 1)
        h.advance(by: 7 * Self.day)
        // No handler ran, so nothing was rescheduled: one window used up, then none.
        #expect(h.events("ios.task.noHandler").count == 1)
        #expect(h.passes(.opportunistic).isEmpty && h.events("window.granted").isEmpty)

        let atLaunch = try DeviceHarness(platform: .ios, settings: settings())
        atLaunch.start()
        atLaunch.advance(by: 2 * Self.day)
        #expect(atLaunch.passes(.opportunistic).count > 3 && atLaunch.events("ios.task.noHandler").isEmpty)
    }

    @Test func anIdentifierInfoPlistDoesNotPermitIsRefusedAtEverySubmit() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings { $0.taskRegistration = .idMismatch })
        h.start()
        let refused = try #require(h.events("schedule.notPermitted").first)
        #expect(refused["reason"]?.stringValue?.hasPrefix("taskRegistration=idMismatch") == true)
        #expect(h.events("schedule.submitted").isEmpty)
        h.advance(by: 7 * Self.day)
        #expect(h.passes(.opportunistic).isEmpty && h.events("window.granted").isEmpty)
        // A launch from closed registers again, and is refused again.
        h.lifecycle(.open)
        h.lifecycle(.close)
        h.lifecycle(.open)
        #expect(h.events("schedule.notPermitted").count == 2)
    }

    @Test func backgroundAppRefreshOffFromTheStartIsSaidAndGrantsNothing() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings { $0.backgroundAppRefresh = false })
        h.start()
        let set = try #require(h.events("refresh.set").first)
        #expect(set["on"] == false && set["reason"]?.stringValue?.hasPrefix("backgroundAppRefresh=false") == true)
        #expect(h.events("schedule.unavailable").count == 1)
        #expect(h.instance.deviceState.refreshOff)
        #expect(h.events("guarantee").last?["kind"] == "foregroundOnly")
        h.advance(by: 2 * Self.day)
        #expect(h.passes(.opportunistic).isEmpty)
        // The user's later `refresh` switch wins over the setting.
        h.run { $0.onLifecycle(.refresh(on: true), now: h.now) }
        h.advance(by: 2 * Self.day)
        #expect(!h.passes(.opportunistic).isEmpty)

        let on = try DeviceHarness(platform: .ios, settings: settings())
        on.start()
        #expect(on.events("refresh.set").isEmpty && on.events("schedule.unavailable").isEmpty)
        #expect(!on.instance.deviceState.refreshOff)
    }

    @Test func withNoTaskASilentPushBringsNewsInButNothingSendsAnEditOut() throws {
        func editLeftInTheBackground(_ kind: DeviceSettings.TaskKind) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .ios, settings: settings { $0.taskKind = kind })
            h.start()
            _ = h.server.remoteEdit(draft: "news", title: "from the web")
            h.hint("h1", head: 1)  // inbound: the push's pass pulls
            #expect(h.instance.cursor == 1)
            try h.edit("mine")  // saved in the background: iOS runs no local-edit pass there
            h.advance(by: 2 * Self.day)
            return h
        }
        let none = try editLeftInTheBackground(.noTask)
        #expect(none.events("schedule.skipped").first?["reason"]?.stringValue?.hasPrefix("taskKind=none") == true)
        #expect(none.events("schedule.submitted").isEmpty && none.passes(.opportunistic).isEmpty)
        #expect(none.server.changes.count == 1)  // the news only: nothing woke the app to send "mine"
        #expect(none.events("guarantee").last?["kind"] == "foregroundOnly")

        let refresh = try editLeftInTheBackground(.refresh)
        #expect(refresh.events("schedule.skipped").isEmpty && !refresh.passes(.opportunistic).isEmpty)
        #expect(refresh.server.changes.count == 2)  // a refresh window sent it
    }

    @Test func theSwitchesAreKnobsWhoseDefaultsAreTheLabsDesign() throws {
        for key in ["setTaskCompleted", "taskRegistration", "backgroundAppRefresh"] {
            #expect(DeviceSettings.knob(key: key) != nil, "no knob \(key)")
        }
        #expect(DeviceSettings().flags().isEmpty)
        var broken = DeviceSettings()
        try DeviceSettings.knob(key: "taskRegistration")!.apply("idMismatch", to: &broken)
        #expect(broken.taskRegistration == .idMismatch)
        let knob = try #require(DeviceSettings.knob(key: "taskRegistration"))
        #expect(throws: KnobError.self) { try knob.apply("never", to: &broken) }
    }
}
