import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The web model (docs/DEVICE.md lists the rules).
@Suite struct WebSchedulerTests {
    static let day = 86_400.0

    func settings(start: StartState, beacon: Bool = false) -> DeviceSettings {
        var settings = DeviceSettings()
        settings.startState = start
        settings.beaconOnClose = beacon
        return settings
    }

    @Test func theIntervalTimerRunsOnlyWhileTheTabIsOpen() throws {
        let h = try DeviceHarness(platform: .web, settings: settings(start: .foreground))
        h.start()
        h.advance(by: 3_600)
        #expect(h.passes(.interval).count == 4)
        h.lifecycle(.background)  // hidden, still open: the timer keeps going
        h.advance(by: 3_600)
        #expect(h.passes(.interval).count == 8)
        h.lifecycle(.close)
        let closed = h.passes.count
        h.advance(by: 7 * Self.day)
        h.hint("h1", head: 0)
        h.lifecycle(.offline)
        h.lifecycle(.online)
        #expect(h.passes.count == closed)  // seed 000: a closed tab ran 0 syncs
        #expect(h.instance.guarantee.kind == "foregroundOnly")
    }

    @Test func visibilityAndOnlineAreRealTriggers() throws {
        let h = try DeviceHarness(platform: .web, settings: settings(start: .background))
        h.start()
        h.lifecycle(.open)
        #expect(h.passes.last?.trigger == .visibility)
        h.lifecycle(.close)
        h.lifecycle(.open)
        #expect(h.passes.last?.trigger == .foreground)
        h.lifecycle(.offline)
        h.lifecycle(.online)
        #expect(h.passes.last?.trigger == .connectivity)
        #expect(h.instance.guarantee == .foregroundOnly(triggers: [.foreground, .visibility, .connectivity, .interval],
                                                        reason: "a closed page has no timer and no listener"))
    }

    @Test func closingTheTabFlushesPendingOpsWithABeacon() throws {
        let h = try DeviceHarness(platform: .web, settings: settings(start: .foreground, beacon: true))
        h.start()
        h.lifecycle(.background)  // hidden: edits made here start no pass
        let saved = try h.edit("d1", title: "typed then closed")
        #expect(try h.status(saved.key) == .savedOnDevice)
        h.lifecycle(.close)
        #expect(h.events("beacon.sent").first?["ops"] == 1)
        #expect(h.server.applications(of: saved.key) == 1)  // the browser delivered it after the page was gone
        #expect(try h.status(saved.key) == .confirmationDelayed)  // nobody read the answer
        h.lifecycle(.open)
        #expect(try h.status(saved.key) == .completed)
        #expect(h.server.applications(of: saved.key) == 1)
    }

    @Test func withoutTheBeaconAClosedTabKeepsItsEditsUntilReopened() throws {
        let h = try DeviceHarness(platform: .web, settings: settings(start: .foreground))
        h.start()
        h.lifecycle(.background)
        let saved = try h.edit("d1")
        h.lifecycle(.close)
        h.advance(by: Self.day)
        #expect(h.server.applications(of: saved.key) == 0)
        #expect(try h.status(saved.key) == .savedOnDevice)
        h.lifecycle(.open)
        #expect(try h.status(saved.key) == .completed)
    }
}
