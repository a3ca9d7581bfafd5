import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The device's design switches (issue 13): each test runs the broken design and shows the failure the seed predicts,
/// and runs the default beside it to show the lab's design is unchanged. Fake clock, real ledger, scripted server.
@Suite struct DesignSwitchTests {
    static let day = 86_400.0

    func settings(_ start: StartState = .background, _ change: (inout DeviceSettings) -> Void = { _ in })
        -> DeviceSettings
    {
        var settings = DeviceSettings()
        settings.startState = start
        change(&settings)
        return settings
    }

    // MARK: - pullOn

    @Test func pushOnlyNeverRepairsTheCursorOnOpenButTheDefaultDoes() throws {
        func openAfterALostHint(_ pullOn: DeviceSettings.PullOn) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .android, settings: settings { $0.pullOn = pullOn })
            h.start()
            _ = h.server.remoteEdit(draft: "d1", title: "from a")  // its hint is lost
            h.lifecycle(.open)
            return h
        }
        let trusting = try openAfterALostHint(.pushOnly)
        #expect(trusting.instance.cursor == 0)
        #expect(try trusting.ledger.drafts().isEmpty)
        let skipped = try #require(trusting.events("pass.skippedPull").last)
        #expect(skipped["trigger"] == "foreground")
        #expect(skipped["reason"]?.stringValue?.contains("pushOnly") == true)
        #expect(trusting.passes.last?.success == false)
        // Even a manual sync does not pull: only the next hint would.
        trusting.sync(token: 1)
        #expect(trusting.instance.cursor == 0)
        trusting.hint("h2", head: 1)
        #expect(trusting.instance.cursor == 1, "\(trusting.log.suffix(8).map { "\($0.type) \($0.fields)" })")

        let repairing = try openAfterALostHint(.all)
        #expect(repairing.instance.cursor == 1)
        #expect(repairing.events("pass.skippedPull").isEmpty)
    }

    @Test func scheduledOnlyPullsInAWindowButNotOnOpen() throws {
        let h = try DeviceHarness(platform: .android, settings: settings { $0.pullOn = .scheduledOnly })
        h.start()
        _ = h.server.remoteEdit(draft: "d1", title: "from a")
        h.lifecycle(.open)
        #expect(h.instance.cursor == 0)
        h.lifecycle(.background)
        h.advance(by: 3 * 3_600)  // periodic runs
        #expect(h.passes(.periodic).first?.pulled == 1, "\(h.passes.map { "\($0.trigger) \($0.started)" })")
        #expect(h.instance.cursor == 1)
    }

    @Test func foregroundPullOffRunsNoPassOnOpen() throws {
        let off = try DeviceHarness(platform: .ios, settings: settings { $0.foregroundPull = false })
        off.start()
        _ = off.server.remoteEdit(draft: "d1", title: "from a")
        off.lifecycle(.open)
        #expect(off.passes(.foreground).isEmpty)
        #expect(off.instance.cursor == 0)
        #expect(off.events("trigger.refused").last?["reason"]?.stringValue?.contains("foregroundPull") == true)

        let on = try DeviceHarness(platform: .ios, settings: settings())
        on.start()
        _ = on.server.remoteEdit(draft: "d1", title: "from a")
        on.lifecycle(.open)
        #expect(on.passes(.foreground).count == 1)
        #expect(on.instance.cursor == 1)
    }

    // MARK: - opQueue

    @Test func aMemoryQueueLosesUnsentEditsAtForceQuitAndAtRestart() throws {
        let memory = try DeviceHarness(platform: .android, settings: settings { $0.opQueue = .memory })
        memory.start()
        memory.lifecycle(.offline)
        let first = try memory.edit("d1", title: "written offline")
        memory.lifecycle(.forceQuit)
        #expect(try memory.ledger.op(first.key) == nil)
        #expect(try memory.ledger.drafts().isEmpty)
        let lost = try #require(memory.events("queue.lost").last)
        #expect(lost["keys"] == .array([.string(first.key)]))
        #expect(lost["reason"]?.stringValue?.contains("force-quit") == true)

        // A restart loses what the queue held too (the ledger file stands in for the dead process's memory).
        let second = try memory.ledger.save(LocalEdit(draft: "d2", action: .create, title: "t", body: "b"),
                                            device: "b", wall: 0)
        let again = try Ledger(path: memory.ledger.path, synchronous: .off)
        let identity = DeviceIdentity(device: "b", account: "acme", token: "t-b", platform: .android)
        let restored = try again.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                                         settings: settings { $0.opQueue = .memory }, now: 10)
        #expect(restored.lostOps == [second.key])
        var restarted = DeviceInstance(identity: identity, settings: settings { $0.opQueue = .memory },
                                       restored: restored, brokerEnabled: false, rng: SeededGenerator(seed: 1))
        let started = restarted.start(now: 10)
        #expect(started.contains(.log(DeviceInstance.queueLost([second.key],
                                                               reason: "opQueue=memory: the process restarted"))))

        let durable = try DeviceHarness(platform: .android, settings: settings())
        durable.start()
        durable.lifecycle(.offline)
        let kept = try durable.edit("d1", title: "written offline")
        durable.lifecycle(.forceQuit)
        #expect(try durable.status(kept.key) == .savedOnDevice)
        #expect(durable.events("queue.lost").isEmpty)
    }

    // MARK: - keyPerAttempt

    @Test func aNewKeyPerAttemptAppliesAnEditTwiceWhenAReplyIsLost() throws {
        func resendAfterALostReply(_ renew: Bool) throws -> (DeviceHarness, SavedEdit) {
            let h = try DeviceHarness(platform: .android, settings: settings(.foreground) { $0.keyPerAttempt = renew })
            h.start()
            h.loseReply = { if case .pushResult = $0 { return true } else { return false } }
            let saved = try h.edit("d1")
            h.advance(by: 2)  // the reply timeout: an unknown outcome
            h.loseReply = { _ in false }
            h.sync(token: 1)
            return (h, saved)
        }
        let (renewing, saved) = try resendAfterALostReply(true)
        #expect(renewing.sentPushes().flatMap { $0.ops.map(\.key) } == [saved.key, saved.key + "~2"])
        #expect(renewing.server.applications(of: saved.key) == 1)
        #expect(renewing.server.applications(of: saved.key + "~2") == 1)  // the same intent, applied twice
        let renewed = try #require(renewing.events("op.keyRenewed").first)
        #expect(renewed["key"] == .string(saved.key))
        #expect(renewed["to"] == .string(saved.key + "~2"))
        #expect(try renewing.status(saved.key) == .completed)  // the reply was mapped back by the new key

        let (reusing, same) = try resendAfterALostReply(false)
        #expect(reusing.sentPushes().flatMap { $0.ops.map(\.key) } == [same.key, same.key])
        #expect(reusing.server.changes.count == 1)
        #expect(reusing.events("op.keyRenewed").isEmpty)
    }

    // MARK: - leases

    @Test func withoutLeasesAKilledPassStrandsItsOpsForEver() throws {
        func killMidPassThenReopen(_ leases: Bool) throws -> (DeviceHarness, SavedEdit) {
            let h = try DeviceHarness(platform: .android, settings: settings(.foreground) { $0.leases = leases })
            h.start()
            h.serverAnswers = false
            let saved = try h.edit("d1")  // a local-edit pass claims it, then the user force-quits
            h.lifecycle(.forceQuit)
            h.outbox = []
            h.serverAnswers = true
            h.advance(by: 3_600)
            h.lifecycle(.open)
            h.sync(token: 1, force: true)
            return (h, saved)
        }
        let unleased = try killMidPassThenReopen(false)
        #expect(try unleased.0.status(unleased.1.key) == .sending)
        #expect(try unleased.0.ledger.op(unleased.1.key)?.leaseExpiresSim == nil)
        #expect(unleased.0.sentPushes().count == 1)  // never sent again
        #expect(unleased.0.events("lease.stranded").last?["count"] == 1)

        let leased = try killMidPassThenReopen(true)
        #expect(try leased.0.status(leased.1.key) == .completed)
        #expect(leased.0.events("lease.reclaimed").count == 1)
        #expect(leased.0.events("lease.stranded").isEmpty)
    }

    // MARK: - cursorCommit

    @Test func aCursorCommittedBeforeItsPageLosesThePageAtAKill() throws {
        func killAfterTheCursorCommit(_ mode: DeviceSettings.CursorCommit) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .android, settings: settings { $0.cursorCommit = mode })
            h.start()
            for index in 1...3 { _ = h.server.remoteEdit(draft: "d\(index)", title: "t\(index)") }
            h.killAfterCursorCommit = true
            h.hint("h1", head: 3)
            return h
        }
        let early = try killAfterTheCursorCommit(.beforePage)
        #expect(early.killed)
        // The restarted device: its cursor is past three changes it never applied; it will never pull them again.
        #expect(try early.ledger.cursor() == 3)
        #expect(try early.ledger.drafts().isEmpty)
        let restarted = try DeviceHarness(platform: .android, settings: settings { $0.cursorCommit = .beforePage },
                                          folder: early.folder)
        restarted.server = early.server
        restarted.start()
        restarted.lifecycle(.open)
        #expect(restarted.instance.cursor == 3)
        #expect(try restarted.ledger.drafts().isEmpty)
        #expect(restarted.events("change.applied").isEmpty)

        let together = try killAfterTheCursorCommit(.withPage)
        #expect(!together.killed)  // no commit of the cursor alone: nothing to be killed after
        #expect(try together.ledger.drafts().map(\.id) == ["d1", "d2", "d3"])
    }

    @Test func aForceQuitWhileThePageIsBeingAppliedLosesItWithBeforePage() throws {
        /// A device that commits its cursor before its page, hinted to one remote edit whose page takes 5 s to apply.
        func applyingAPage() throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .android, settings: settings {
                $0.cursorCommit = .beforePage
                $0.pageCostSec = 5
            })
            h.start()
            _ = h.server.remoteEdit(draft: "d1", title: "t1")
            h.hint("h1", head: 1)
            return h
        }
        let h = try applyingAPage()
        #expect(h.instance.cursor == 1)
        #expect(h.instance.pass?.pendingPage != nil)
        h.lifecycle(.forceQuit)
        #expect(h.events("page.lost").last?["seqs"] == .array([1]))
        h.lifecycle(.open)
        #expect(try h.ledger.drafts().isEmpty)  // the cursor says 1; the page is gone

        // Not killed: the page lands once its work is done.
        let calm = try applyingAPage()
        calm.advance(by: 6)
        #expect(try calm.ledger.drafts().map(\.id) == ["d1"])
        #expect(calm.passes.last?.success == true)
    }

    // MARK: - retryPermanent, backoffCap

    @Test func retryingPermanentFailuresNeverSettlesTheOp() throws {
        func sendATooLargeBody(_ retry: Bool) throws -> (DeviceHarness, SavedEdit) {
            let h = try DeviceHarness(platform: .android, settings: settings(.foreground) {
                $0.retryPermanent = retry
                $0.maxAttempts = 3
            })
            h.server.rejectBodiesOver = 10
            h.start()
            let saved = try h.edit("big", body: String(repeating: "x", count: 100))
            for token in 1...5 { h.sync(token: token, force: true) }
            return (h, saved)
        }
        let (retrying, saved) = try sendATooLargeBody(true)
        #expect(try retrying.status(saved.key) == .waitingToSend)
        #expect(try retrying.ledger.op(saved.key)?.attempts == 6)  // past maxAttempts, and on it goes
        #expect(retrying.events("op.result").last?["reason"]?.stringValue?.contains("retryPermanent") == true)

        let (settling, rejected) = try sendATooLargeBody(false)
        #expect(try settling.status(rejected.key) == .needsAttention)
        #expect(settling.sentPushes().count == 1)
    }

    @Test func uncappedBackoffGrowsWithoutBound() {
        var capped = DeviceSettings()
        capped.backoffBaseSec = 30
        var uncapped = capped
        uncapped.backoffCap = false
        #expect(capped.backoff(afterAttempt: 20) == 3_600)
        #expect(uncapped.backoff(afterAttempt: 20) == 30 * pow(2, 19))  // 182 days
        #expect(capped.backoff(afterAttempt: 3) == uncapped.backoff(afterAttempt: 3))
    }

    @Test func anUncappedBackoffSaysSoInItsRetryReason() throws {
        let h = try DeviceHarness(platform: .android, settings: settings(.foreground) {
            $0.backoffCap = false
            $0.backoffBaseSec = 3_000
            $0.maxAttempts = 100
        })
        h.start()
        let key = "b-" + (try h.ledger.stateString("install") ?? "") + "-1"
        h.server.retryLaterKeys = [key]
        try h.edit("d1")
        h.sync(token: 1, force: true)
        let reasons = h.events("op.result").compactMap { $0["reason"]?.stringValue }
        #expect(reasons.first == "busy")  // 3,000 s: under the cap
        #expect(reasons.last?.contains("backoffCap off: 6000 s, over the cap") == true)
        #expect(try h.ledger.op(key)?.nextAttemptSim == h.now + 6_000)
    }

    // MARK: - coalesce

    @Test func withoutCoalescingEveryTriggerQueuesAFullPass() throws {
        func threeHintsDuringAPass(_ coalesce: Bool) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .android, settings: settings(.foreground) { $0.coalesce = coalesce })
            h.serverAnswers = false
            h.start()
            for index in 1...3 { h.hint("h\(index)", head: 0) }
            h.serverAnswers = true
            h.pump()
            return h
        }
        let queued = try threeHintsDuringAPass(false)
        #expect(queued.passes.map(\.trigger) == [.foreground, .push, .push, .push])
        #expect(queued.events("trigger").compactMap { $0["queued"]?.intValue } == [1, 2, 3])
        #expect(queued.events("pass.queuedStarting").count == 3)

        let kept = try threeHintsDuringAPass(true)
        #expect(kept.passes.map(\.trigger) == [.foreground, .push])
    }

    /// Seed 002's "a screen that enqueues on every resume will happily queue the same upload fifteen times": offline,
    /// WorkManager holds each enqueued request until the network is back, and then runs every one. Unique work with
    /// KEEP (the default) runs one pass.
    @Test func withoutCoalescingEveryResumeOfflineRunsAPassWhenTheNetworkComesBack() throws {
        func fiveResumesOffline(_ coalesce: Bool) throws -> DeviceHarness {
            let h = try DeviceHarness(platform: .android, settings: settings { $0.coalesce = coalesce })
            h.start()
            h.lifecycle(.offline)
            for _ in 1...5 {
                h.lifecycle(.open)
                h.lifecycle(.background)
            }
            h.lifecycle(.open)
            #expect(h.passes.isEmpty)
            _ = h.server.remoteEdit(draft: "d1", title: "from a")
            h.lifecycle(.online)
            return h
        }
        let queued = try fiveResumesOffline(false)
        defer { queued.removeFolder() }
        #expect(queued.passes.map(\.trigger) == [.connectivity] + Array(repeating: .foreground, count: 6),
                "\(queued.passes.map(\.trigger))")
        #expect(queued.events("trigger").compactMap { $0["waiting"]?.stringValue }.filter { $0.hasPrefix("offline") }
            .count == 6)
        // The first pass did the work; the six queued after it found nothing to do.
        #expect(queued.passes.map(\.pulled) == [1, 0, 0, 0, 0, 0, 0])

        let kept = try fiveResumesOffline(true)
        defer { kept.removeFolder() }
        #expect(kept.passes.map(\.trigger) == [.connectivity])
        #expect(kept.events("trigger.refused").count == 6)
    }

    /// A queued pass the platform refuses when its turn comes (a foreground pass once the app is in the background)
    /// is dropped, and the next one in line runs: a refusal does not strand the rest of the queue.
    @Test func aRefusedQueuedPassDoesNotStrandTheOnesBehindIt() throws {
        let h = try DeviceHarness(platform: .android, settings: settings(.foreground) { $0.coalesce = false })
        defer { h.removeFolder() }
        h.serverAnswers = false
        h.start()
        h.lifecycle(.background)
        h.lifecycle(.open)  // a foreground pass queued behind the launch pass
        h.hint("h1", head: 0)  // a push pass queued behind it
        h.lifecycle(.background)
        h.serverAnswers = true
        h.pump()
        #expect(h.passes.map(\.trigger) == [.foreground, .push], "\(h.passes.map(\.trigger))")
        #expect(h.events("trigger.refused").last?["followUp"] == true)
        #expect(h.instance.queuedPasses.isEmpty)
    }

    /// The process is gone: nothing that waited behind its pass runs, with or without unique work.
    @Test func aForceQuitDropsTheFollowUpAndTheQueuedPasses() throws {
        for coalesce in [true, false] {
            let h = try DeviceHarness(platform: .android, settings: settings(.foreground) { $0.coalesce = coalesce })
            defer { h.removeFolder() }
            h.serverAnswers = false
            h.start()
            h.hint("h1", head: 0)
            h.hint("h2", head: 0)
            h.lifecycle(.forceQuit)
            h.serverAnswers = true
            h.pump()
            #expect(h.passes.map(\.trigger) == [.foreground], "coalesce \(coalesce): \(h.passes.map(\.trigger))")
            #expect(h.passes.first?.outcome == .killed)
            let dropped = try #require(h.events("passes.dropped").first)
            #expect(dropped["count"]?.intValue == (coalesce ? 1 : 2))
            #expect(h.instance.followUp == nil && h.instance.queuedPasses.isEmpty)
        }
    }

    // MARK: - iOS

    /// An iOS device in the background with one unsent edit and a send cost that exceeds the 30 s window.
    func expensiveWindow(_ change: (inout DeviceSettings) -> Void) throws -> (DeviceHarness, SavedEdit) {
        let h = try DeviceHarness(platform: .ios, settings: settings {
            $0.opensPerDay = 12
            $0.opCostSec = 40
            change(&$0)
        })
        h.start()
        let saved = try h.edit("d1")
        while h.passes(.opportunistic).isEmpty { h.advance(by: 600) }
        return (h, saved)
    }

    @Test func aWindowRunsOutMidPassFromTheWorkItDoes() throws {
        let (h, saved) = try expensiveWindow { _ in }
        let cut = try #require(h.passes(.opportunistic).first)
        #expect(cut.cutOff && cut.outcome == .cutOff)
        let expired = try #require(h.events("ios.window.expired").first)
        #expect(expired["handled"] == true && expired["chargedSec"] == 40)
        // With the handler: released as unknown, no budget penalty; the server did apply it (the reply was stale).
        #expect(try h.status(saved.key) == .confirmationDelayed)
        #expect(h.events("budget.shrunk").isEmpty)
        #expect(h.events("reply.stale").count == 1)

        // The default costs leave a full batch far inside the window.
        let cheap = try DeviceHarness(platform: .ios, settings: settings { $0.opensPerDay = 12 })
        cheap.start()
        for index in 1...50 { try cheap.edit("d\(index)") }
        while cheap.passes(.opportunistic).isEmpty { cheap.advance(by: 600) }
        #expect(cheap.passes(.opportunistic).first?.cutOff == false)
        #expect(cheap.passes(.opportunistic).first?.sent == 50)
    }

    @Test func aPageThatDoesNotFitTheWindowIsNotAppliedAndIsPulledByTheNextWindow() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings {
            $0.opensPerDay = 12
            $0.pageCostSec = 20
            $0.pageLimit = 1
        })
        h.start()
        for index in 1...3 { _ = h.server.remoteEdit(draft: "d\(index)", title: "t\(index)") }
        while h.passes(.opportunistic).isEmpty { h.advance(by: 600) }
        // 20 s for the first page fits the 30 s window; the second page's 20 s does not: cut off, not applied.
        #expect(h.passes(.opportunistic).first?.cutOff == true)
        #expect(h.instance.cursor == 1)
        #expect(try h.ledger.drafts().map(\.id) == ["d1"])
        while h.passes(.opportunistic).count < 3 { h.advance(by: 600) }
        #expect(h.instance.cursor == 3)
        #expect(h.events("change.applied").compactMap { $0["seq"]?.intValue } == [1, 2, 3])
    }

    @Test func withoutAnExpirationHandlerTheTaskIsKilledAndTheBudgetShrinks() throws {
        let (h, saved) = try expensiveWindow { $0.expirationHandler = false }
        let expired = try #require(h.events("ios.window.expired").first)
        #expect(expired["handled"] == false)
        #expect(h.events("budget.shrunk").first?["to"] == 0.5)
        if case let ios as IOSScheduler = h.instance.scheduler { #expect(ios.budgetFactor == 0.5) }
        // Nothing cancelled the work: the op is still claimed until its lease runs out.
        #expect(try h.status(saved.key) == .sending)
    }

    @Test func reschedulingLastLeavesNothingScheduledAfterAnExpiredWindow() throws {
        let (last, _) = try expensiveWindow { $0.reschedule = .last }
        #expect(last.events("ios.schedule.lost").count == 1)
        let windows = last.events("window.granted").count
        last.advance(by: 7 * Self.day)
        #expect(last.events("window.granted").count == windows)  // never again, until a launch

        let (first, _) = try expensiveWindow { _ in }
        #expect(first.events("ios.schedule.lost").isEmpty)
        let before = first.events("window.granted").count
        first.advance(by: 7 * Self.day)
        #expect(first.events("window.granted").count > before)
    }

    @Test func reschedulingLastStillWorksWhenTheHandlerEnds() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings {
            $0.opensPerDay = 12
            $0.reschedule = .last
        })
        h.start()
        h.advance(by: 3 * Self.day)
        #expect(h.passes(.opportunistic).count > 1)
        #expect(h.events("schedule.submitted").contains { $0["reason"] == "rescheduled at the end of the handler" })
    }

    @Test func aProcessingTaskRunsOnlyWhileCharging() throws {
        let h = try DeviceHarness(platform: .ios, settings: settings {
            $0.opensPerDay = 12
            $0.taskKind = .processing
        })
        h.start()
        #expect(h.events("schedule.submitted").first?["api"]?.stringValue?.contains("BGProcessingTaskRequest") == true)
        h.advance(by: 2 * Self.day)  // on battery
        #expect(h.passes(.opportunistic).isEmpty)
        h.lifecycle(.plug)
        h.advance(by: 8 * 3_600)  // a night on the charger
        #expect(h.passes(.opportunistic).count >= 3)
        #expect(h.events("window.granted").allSatisfy { $0["taskKind"] == "processing" })

        let refresh = try DeviceHarness(platform: .ios, settings: settings { $0.opensPerDay = 12 })
        refresh.start()
        refresh.advance(by: 2 * Self.day)
        #expect(!refresh.passes(.opportunistic).isEmpty)  // on battery too
    }
}
