import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The switch `pageCommit` (seed 001: "a large one is cut off and starts over"), through the pure instance with a
/// fake clock: a backlog of four pages where a 30 s iOS window fits two.
@Suite struct PageCommitTests {
    func backlog(_ commit: DeviceSettings.PageCommit) throws -> DeviceHarness {
        var settings = DeviceSettings()
        settings.startState = .background
        settings.opensPerDay = 12
        settings.pageCostSec = 12
        settings.pageLimit = 2
        settings.pageCommit = commit
        let h = try DeviceHarness(platform: .ios, settings: settings)
        h.start()
        for index in 1...8 { _ = h.server.remoteEdit(draft: "d\(index)", title: "t\(index)") }
        while h.passes(.opportunistic).count < 4 { h.advance(by: 600) }
        return h
    }

    @Test func perPageKeepsWhatEachCutOffWindowFinished() throws {
        let h = try backlog(.perPage)
        #expect(h.passes(.opportunistic).first?.cutOff == true)
        #expect(h.instance.cursor == 8)
        #expect(try h.ledger.drafts().count == 8)
        #expect(h.events("pages.discarded").isEmpty)
    }

    @Test func atPassEndEveryWindowStartsOverAndNothingIsApplied() throws {
        let h = try backlog(.atPassEnd)
        let windows = h.passes(.opportunistic)
        #expect(windows.allSatisfy { $0.cutOff })
        #expect(h.instance.cursor == 0)
        #expect(try h.ledger.drafts().isEmpty)
        let discarded = h.events("pages.discarded")
        #expect(discarded.count == windows.count)
        // Two pages fit the window; the third ran it out: all three go.
        #expect(discarded.allSatisfy { $0["from"] == 0 && $0["pages"] == 3 && $0["to"] == 6 })
        #expect(h.events("change.applied").isEmpty)
        // In the foreground there is no window: the same pass ends, and its one commit applies all four pages.
        h.lifecycle(.open)
        #expect(h.instance.cursor == 8)
        #expect(try h.ledger.drafts().count == 8)
        #expect(h.events("change.applied").compactMap { $0["seq"]?.intValue } == Array(1...8))
        #expect(h.events("cursor.moved").compactMap { $0["to"]?.intValue } == [2, 4, 6, 8])
    }
}
