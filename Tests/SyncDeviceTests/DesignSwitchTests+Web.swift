import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The web switches and the switch table itself (split from DesignSwitchTests.swift for its size).
extension DesignSwitchTests {
    // MARK: - web

    @Test func webTriggersDecideWhichPageEventsRunAPass() throws {
        func goOfflineAndBack(_ triggers: DeviceSettings.WebTriggers) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .web, settings: settings(.foreground) {
                $0.webTriggers = triggers
                $0.desiredIntervalSec = 3_600
            })
            h.start()
            h.lifecycle(.offline)
            h.lifecycle(.online)
            h.lifecycle(.background)
            h.lifecycle(.open)  // the tab shown again: visibilitychange
            return h
        }
        let bare = try goOfflineAndBack(.interval)
        #expect(bare.passes(.connectivity).isEmpty && bare.passes(.visibility).isEmpty)
        #expect(bare.events("trigger.refused").compactMap { $0["reason"]?.stringValue }.allSatisfy {
            $0.contains("webTriggers=interval")
        })
        let online = try goOfflineAndBack(.intervalOnline)
        #expect(online.passes(.connectivity).count == 1 && online.passes(.visibility).isEmpty)
        let all = try goOfflineAndBack(.intervalOnlineVisibility)
        #expect(all.passes(.connectivity).count == 1 && all.passes(.visibility).count == 1)
    }

    @Test func anUnloadTaskNeverRunsOnlyTheBeaconOutlivesThePage() throws {
        func closeWithAPendingEdit(_ flush: DeviceSettings.UnloadFlush) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .web, settings: settings(.foreground) { $0.unloadFlush = flush })
            h.start()
            h.lifecycle(.background)  // a hidden tab: an edit there waits for the next pass
            try h.edit("d1")
            h.lifecycle(.close)
            return h
        }
        let task = try closeWithAPendingEdit(.task)
        #expect(task.events("unload.taskAbandoned").count == 1)
        #expect(task.sentPushes().isEmpty)
        #expect(task.server.changes.isEmpty)
        let beacon = try closeWithAPendingEdit(.beacon)
        #expect(beacon.events("beacon.sent").count == 1)
        #expect(beacon.server.changes.count == 1)
        let none = try closeWithAPendingEdit(.none)
        #expect(none.events("unload.taskAbandoned").isEmpty && none.events("beacon.sent").isEmpty)
    }

    // MARK: - knobs

    @Test func everySwitchIsAKnobWhoseDefaultIsTheLabsDesign() throws {
        let keys = ["pullOn", "foregroundPull", "opQueue", "keyPerAttempt", "leases", "cursorCommit", "retryPermanent",
                    "backoffCap", "coalesce", "opCostSec", "pageCostSec", "expirationHandler", "reschedule", "taskKind",
                    "webTriggers", "unloadFlush"]
        for key in keys { #expect(DeviceSettings.knob(key: key) != nil, "no knob \(key)") }
        #expect(DeviceSettings().flags().isEmpty)
        var broken = DeviceSettings()
        try DeviceSettings.knob(key: "pullOn")!.apply("pushOnly", to: &broken)
        try DeviceSettings.knob(key: "webTriggers")!.apply("interval+online", to: &broken)
        #expect(broken.pullOn == .pushOnly && broken.webTriggers == .intervalOnline)
        #expect(broken.flags() == ["--pull-on", "pushOnly", "--web-triggers", "interval+online"])
        #expect(throws: KnobError.self) { try DeviceSettings.knob(key: "cursorCommit")!.apply("later", to: &broken) }
    }
}
