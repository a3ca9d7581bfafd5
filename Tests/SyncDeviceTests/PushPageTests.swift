import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// A sending pass asks for its page with its push (`Push.cursor`): the server reads it after the commit and sends it
/// with the results, so the pass settles its ops and applies the page in one commit, with no pull round trip
/// (PROTOCOL.md, "A push that pulls"). Through the real driver and ledger, a fake clock and a scripted server.
@Suite struct PushPageTests {
    func harness(_ configure: (inout DeviceSettings) -> Void = { _ in }) throws -> DeviceHarness {
        var settings = DeviceSettings()
        settings.startState = .foreground
        configure(&settings)
        let h = try DeviceHarness(platform: .android, settings: settings)
        h.start()
        h.hint("h0", head: 0)  // the session's hello, out of the way
        return h
    }

    func pulls(_ h: DeviceHarness) -> Int { h.sentMessages.filter { if case .pull = $0 { true } else { false } }.count }

    @Test func theOwnChangeComesWithTheResultsInOneCommit() throws {
        let h = try harness()
        let remote = h.server.remoteEdit(draft: "r", title: "from a")
        let pullsBefore = pulls(h), commitsBefore = h.writingCommits
        try h.edit("d1")
        let push = try #require(h.sentPushes().last)
        #expect(push.cursor == 0 && push.limit == DeviceSettings().pageLimit)
        #expect(pulls(h) == pullsBefore)
        // The edit; the claim's lease, before the push left; then the outcome, the page, the cursor and the pass's
        // end, together.
        #expect(h.writingCommits - commitsBefore == 3)
        #expect(try h.instance.cursor == 2 && h.ledger.cursor() == 2)
        #expect(h.events("change.applied").map { $0["key"]?.stringValue } == [remote.key, push.ops[0].key])
        #expect(try h.status(push.ops[0].key) == .completed)
        #expect(h.passes(.localEdit).last?.pulled == 2)
    }

    @Test func aServerThatIgnoresTheAskIsPulledFrom() throws {
        let h = try harness()
        h.server.answersPushPages = false
        let pullsBefore = pulls(h), commitsBefore = h.writingCommits
        try h.edit("d1")
        #expect(h.sentPushes().last?.cursor == 0)
        #expect(pulls(h) == pullsBefore + 1)
        // The outcome is committed before the pull leaves, the page after it comes: one commit more.
        #expect(h.writingCommits - commitsBefore == 4)
        #expect(h.instance.cursor == 1 && h.passes(.localEdit).last?.pulled == 1)
    }

    @Test func aPageShortOfTheHeadIsFollowedByPulls() throws {
        let h = try harness { $0.pageLimit = 2 }
        for n in 1...5 { _ = h.server.remoteEdit(draft: "r\(n)", title: "remote \(n)") }
        let pullsBefore = pulls(h)
        try h.edit("d1")
        // Six changes, two a page: the push's page, then two pulls.
        #expect(pulls(h) == pullsBefore + 2)
        #expect(h.instance.cursor == 6 && h.passes(.localEdit).last?.pulled == 6)
    }

    @Test func aPassThatDoesNotPullDoesNotAsk() throws {
        let h = try harness { $0.pullOn = .pushOnly }
        _ = h.server.remoteEdit(draft: "r", title: "from a")
        try h.edit("d1")
        let push = try #require(h.sentPushes().last)
        #expect(push.cursor == nil && push.limit == nil)
        #expect(h.instance.cursor == 0)
        #expect(try h.status(push.ops[0].key) == .completed)
    }
}
