import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The pass and its triggers through the pure instance, a fake clock, a real ledger file and a scripted server.
@Suite struct DeviceInstanceTests {
    func foregroundSettings() -> DeviceSettings {
        var settings = DeviceSettings()
        settings.startState = .foreground
        return settings
    }

    @Test func aLostHintIsRepairedByTheNextForegroundPull() throws {
        var settings = DeviceSettings()
        settings.startState = .background
        let h = try DeviceHarness(platform: .android, settings: settings)
        h.start()
        let change = h.server.remoteEdit(draft: "d1", title: "from a")
        // The hint for that change never arrives. Hours pass in the background with no hint.
        h.lifecycle(.open)
        #expect(h.instance.cursor == change.seq)
        let applied = h.events("change.applied")
        #expect(applied.count == 1)
        #expect(applied.first?["trigger"] == "foreground")
        #expect(try h.ledger.drafts() == [DraftRow(id: "d1", title: "from a", body: "body of from a", version: 1,
                                                   deleted: false)])
        #expect(try h.ledger.cursor() == change.seq)
    }

    @Test func aDuplicateHintRunsAPassThatPullsNothingNew() throws {
        let h = try DeviceHarness(platform: .android)
        h.start()
        _ = h.server.remoteEdit(draft: "d1", title: "one")
        h.hint("h1", head: 1)
        h.hint("h1", head: 1)
        let pushPasses = h.passes(.push)
        #expect(pushPasses.count == 2)
        #expect(pushPasses.map(\.pulled) == [1, 0])
        #expect(h.events("change.applied").count == 1)
        #expect(h.events("hint.received").count == 2)
        #expect(h.instance.cursor == 1)
    }

    @Test func aReceivingPassCommitsOnceItsRowGoingWithItsPage() throws {
        let h = try DeviceHarness(platform: .android)
        h.start()
        h.hint("h0", head: 0)  // the session's first pass says hello first (its row is written before the hello)
        _ = h.server.remoteEdit(draft: "d1", title: "one")
        let before = h.writingCommits
        h.hint("h1", head: 1)
        // Nothing to send: the claim wrote nothing, and the page, the cursor, the pass's row and its end are one
        // commit. (With the row written by the claim, the pass commits twice.)
        #expect(h.writingCommits - before == 1)
        #expect(h.passes(.push).map(\.pulled) == [0, 1])
        #expect(h.passes(.push).last?.outcome == .completed)
        // A pass that finds nothing at all still leaves its row, written with its end.
        h.hint("h1", head: 1)
        #expect(h.passes(.push).map(\.pulled) == [0, 1, 0])
        #expect(h.writingCommits - before == 2)
    }

    @Test func aReceiverWithNothingPendingClaimsWithoutATransaction() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        h.hint("h0", head: 0)
        _ = h.server.remoteEdit(draft: "d1", title: "one")
        h.hold = { if case .pull = $0 { true } else { false } }
        let before = h.commitBoundaries
        h.hint("h1", head: 1)
        // The claim was a read: no transaction was open when the pull left, so nothing was committed before it.
        #expect(h.held.count == 1)
        #expect(h.commitBoundaries == before)
        h.releaseHeld()
        #expect(h.passes(.push).map(\.pulled) == [0, 1])
        // With an op waiting, the claim writes its lease and commits it before the push leaves.
        try h.edit("d2")
        #expect(h.commitBoundaries > before)
        #expect(h.sentPushes().count == 1)
    }

    @Test func anUnknownOutcomeIsResentWithTheSameKeyAndAppliedOnce() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        // The server applies the push but its reply is lost.
        h.loseReply = { if case .pushResult = $0 { return true } else { return false } }
        let saved = try h.edit("d1")
        #expect(h.instance.passRunning)
        h.advance(by: 2)  // past the 1 s reply timeout
        #expect(try h.status(saved.key) == .confirmationDelayed)
        #expect(h.events("op.result").last?["outcome"] == "unknown")
        #expect(!h.instance.passRunning)
        h.loseReply = { _ in false }
        h.sync(token: 1)
        #expect(h.answered == [1])
        #expect(try h.status(saved.key) == .completed)
        let keys = h.sentPushes().flatMap { $0.ops.map(\.key) }
        #expect(keys == [saved.key, saved.key])
        #expect(h.server.applications(of: saved.key) == 1)
        #expect(try h.ledger.op(saved.key)?.attempts == 2)
        #expect(try h.ledger.drafts().map(\.version) == [1])
    }

    @Test func aPermanentRejectionEndsInNeedsAttentionAndLeavesTheReplica() throws {
        let h = try DeviceHarness(platform: .web, settings: foregroundSettings())
        h.server.rejectBodiesOver = 10
        h.start()
        let saved = try h.edit("big", body: String(repeating: "x", count: 100))
        let op = try #require(try h.ledger.op(saved.key))
        #expect(op.status == .needsAttention)
        #expect(op.lastError == "body too large")
        #expect(h.server.applications(of: saved.key) == 0)
        // The replica no longer shows a draft the server will never have.
        #expect(try h.ledger.drafts().isEmpty)
    }

    @Test func transientFailuresBackOffThenNeedAttentionAfterTheCap() throws {
        var settings = foregroundSettings()
        settings.maxAttempts = 3
        settings.backoffBaseSec = 30
        let h = try DeviceHarness(platform: .android, settings: settings)
        h.start()
        let key = "b-" + (try h.ledger.stateString("install") ?? "") + "-1"
        h.server.retryLaterKeys = [key]
        let saved = try h.edit("d1")
        #expect(saved.key == key)
        let first = try #require(try h.ledger.op(key))
        #expect(first.status == .waitingToSend)
        #expect(first.nextAttemptSim == h.now + 30)
        h.sync(token: 1)  // still backing off: not claimed
        #expect(h.sentPushes().count == 1)
        h.advance(by: 31)
        h.sync(token: 2)
        #expect(try h.ledger.op(key)?.nextAttemptSim == h.now + 60)
        h.advance(by: 61)
        h.sync(token: 3)
        let last = try #require(try h.ledger.op(key))
        #expect(last.status == .needsAttention)
        #expect(last.lastError?.hasPrefix("gave up after 3 attempts") == true)
        #expect(h.sentPushes().count == 3)
    }

    @Test func triggersDuringAPassCoalesceIntoOneFollowUp() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.serverAnswers = false
        h.start()
        #expect(h.instance.passRunning)
        h.hint("h1", head: 0)
        h.hint("h2", head: 0)
        try h.edit("d1")
        #expect(h.events("trigger").filter { $0["coalesced"] == true }.count == 3)
        #expect(h.instance.followUp?.trigger == .push)
        h.serverAnswers = true
        h.pump()
        #expect(h.passes.map(\.trigger) == [.foreground, .push])
        #expect(!h.instance.passRunning)
    }

    @Test func aStaleReplyAfterItsTimeoutIsIgnored() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        h.serverAnswers = false
        let saved = try h.edit("d1")
        h.advance(by: 2)
        #expect(try h.status(saved.key) == .confirmationDelayed)
        h.serverAnswers = true
        h.pump()  // the late pushResult arrives after the pass ended
        #expect(h.events("reply.stale").count == 1)
        #expect(try h.status(saved.key) == .confirmationDelayed)
    }

    @Test func aServerThatForgotTheSessionGetsANewHelloAndTheSameBatch() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        h.server.forgetSessionOnce = true
        let saved = try h.edit("d1")
        #expect(try h.status(saved.key) == .completed)
        #expect(h.server.hellos == 2)
        #expect(h.sentPushes().map { $0.ops.map(\.key) } == [[saved.key], [saved.key]])
        #expect(h.server.applications(of: saved.key) == 1)
    }

    @Test func theCursorNeverPassesAGapInAPage() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.serverAnswers = false
        h.start()
        // hello → welcome, then the claim finds nothing, then a pull: answer it by hand with a page missing seq 2.
        h.run(h.instance.onServerMessage(.welcome(Welcome(device: "b", account: "acme", head: 3)), now: 0))
        guard case .pull(let pull) = h.outbox.last else {
            Issue.record("expected a pull, got \(h.outbox)")
            return
        }
        let changes = [1, 3].map {
            Change(seq: $0, draft: "d\($0)", action: .create, version: 1, title: "t", body: "b", origin: "a",
                   key: "a-\($0)", conflict: false)
        }
        h.run(h.instance.onServerMessage(.page(Page(req: pull.req, changes: changes, next: 3, head: 3)), now: 0))
        #expect(h.instance.cursor == 1)
        #expect(try h.ledger.cursor() == 1)
        #expect(h.events("page.gap").count == 1)
        #expect(try h.ledger.drafts().map(\.id) == ["d1"])
    }

    @Test func pagesAreBoundedPerPassAndTheRestIsPulledByTheNext() throws {
        var settings = DeviceSettings()
        settings.pageLimit = 2
        settings.maxPages = 2
        let h = try DeviceHarness(platform: .android, settings: settings)
        h.start()
        for index in 1...7 { _ = h.server.remoteEdit(draft: "d\(index)", title: "t\(index)") }
        h.hint("h", head: 7)
        // The push pass pulls 2 pages of 2, then continues (android may in the background) until the head.
        #expect(h.passes.map(\.pulled) == [4, 3])
        #expect(h.instance.cursor == 7)
        #expect(h.events("cursor.moved").map { $0["to"] } == [2, 4, 6, 7])
    }

    @Test func fullBatchesContinueUntilTheLedgerIsDrained() throws {
        var settings = foregroundSettings()
        settings.batch = 10
        let h = try DeviceHarness(platform: .ios, settings: settings)
        h.serverAnswers = false
        h.start()
        for index in 1...35 { try h.edit("d\(index)") }
        h.serverAnswers = true
        h.pump()
        #expect(try h.ledger.counts()[.completed] == 35)
        #expect(h.sentPushes().map(\.ops.count) == [10, 10, 10, 5])
        #expect(h.server.changes.count == 35)
    }

    @Test func aDraftsEditsAreSentInOrderAndNeverOvertakeEachOther() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        let install = try h.ledger.stateString("install") ?? ""
        h.server.retryLaterKeys = ["b-\(install)-1"]
        let first = try h.edit("d1", .create, title: "v1")
        #expect(try h.status(first.key) == .waitingToSend)
        // The first op backs off; the second edit of the same draft waits behind it, another draft's does not.
        let second = try h.edit("d1", .update, title: "v2")
        let third = try h.edit("d2", .create, title: "other")
        #expect(try h.status(second.key) == .savedOnDevice)
        #expect(try h.status(third.key) == .completed)
        h.server.retryLaterKeys = []
        h.advance(by: 31)
        h.sync(token: 1)
        let order = h.server.changes.map(\.key)
        #expect(order == [third.key, first.key, second.key])
        #expect(try h.ledger.drafts().first(where: { $0.id == "d1" })?.title == "v2")
        #expect(try h.ledger.drafts().first(where: { $0.id == "d1" })?.version == 2)
    }

    @Test func goingOfflineMidPassMakesTheInFlightOpsUnknownAndOnlineResends() throws {
        let h = try DeviceHarness(platform: .web, settings: foregroundSettings())
        h.start()
        h.serverAnswers = false
        let saved = try h.edit("d1")
        h.lifecycle(.offline)
        #expect(try h.status(saved.key) == .confirmationDelayed)
        #expect(h.passes.last?.outcome == .offline)
        h.outbox.removeAll()
        h.serverAnswers = true
        h.lifecycle(.online)
        #expect(h.passes.last?.trigger == .connectivity)
        #expect(try h.status(saved.key) == .completed)
    }

    @Test func aManualSyncWhileOfflineIsAnsweredAtOnce() throws {
        let h = try DeviceHarness(platform: .android)
        h.start()
        h.lifecycle(.offline)
        h.sync(token: 9)
        #expect(h.answered == [9])
        #expect(h.passes.last?.outcome == .offline)
        #expect(h.outbox.isEmpty)
    }

    @Test func theFreshnessComesFromTheLastSuccessfulSync() throws {
        var settings = DeviceSettings()
        settings.freshnessBudgetSec = 3_600
        let h = try DeviceHarness(platform: .android, settings: settings)
        h.start()
        #expect(h.instance.freshness(at: h.now) == .neverSynced)
        h.sync(token: 1)
        let syncedAt = h.now
        #expect(h.instance.freshness(at: h.now + 60) == .current(syncedAt: syncedAt))
        #expect(h.instance.freshness(at: h.now + 7_200) == .stale(syncedAt: syncedAt, age: 7_200))
    }

    @Test func theBrokerIsToldEveryStateChange() throws {
        let h = try DeviceHarness(platform: .ios, brokerEnabled: true)
        h.start()
        guard case .register(let register) = h.toBroker.first else {
            Issue.record("expected register first, got \(h.toBroker)")
            return
        }
        #expect(register.device == "b" && register.token == "t-b" && register.platform == .ios)
        h.run(h.instance.onBrokerMessage(.registered(Registered(device: "b")), keys: ["device"], now: h.now))
        h.lifecycle(.forceQuit)
        h.lifecycle(.refresh(on: false))
        let states = h.toBroker.compactMap { if case .deviceState(let s) = $0 { return s } else { return nil } }
        #expect(states.map(\.app) == [.background, .forceQuit, .forceQuit])
        #expect(states.map(\.refreshOff) == [false, false, true])
    }

    @Test func aHintCarryingContentIsRefusedAndItsKeysAreListed() throws {
        let h = try DeviceHarness(platform: .android)
        h.start()
        let frames = [Array("SL1 hint".utf8), Array(#"{"hint":"h9","account":"acme","head":3,"title":"secret"}"#.utf8)]
        let keys = DeviceDriver.bodyKeys(frames)
        #expect(keys == ["account", "head", "hint", "title"])
        guard case .failure(let error) = Codec.decodeOrReply(frames) else {
            Issue.record("a hint with a title decoded")
            return
        }
        h.run(h.instance.onBrokerGarbage(error, keys: keys, now: h.now))
        let malformed = try #require(h.events("hint.malformed").first)
        #expect(malformed["keys"] == .array(["account", "head", "hint", "title"]))
        #expect(h.passes.isEmpty && h.outbox.isEmpty)
        // A good hint's keys are exactly the reference.
        let good = Codec.encode(.hint(Hint(hint: "h1", account: "acme", head: 1)))
        #expect(DeviceDriver.bodyKeys(good) == ["account", "head", "hint"])
        #expect(DeviceDriver.bodyKeys([Array("SL1 hint".utf8), Array("not json".utf8)]).isEmpty)
    }

    @Test func oddRepliesChangeNothingTheyShouldNot() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        let saved = try h.edit("d1")
        #expect(h.instance.cursor == 1)
        // A page that repeats an applied change, a result for a key never sent, a reply nobody asked for.
        h.serverAnswers = false
        h.sync(token: 1)
        guard case .pull(let pull) = h.outbox.last else {
            Issue.record("expected a pull, got \(h.outbox)")
            return
        }
        let again = h.server.changes[0]
        h.run(h.instance.onServerMessage(.page(Page(req: pull.req, changes: [again], next: 1, head: 1)), now: h.now))
        #expect(h.events("change.applied").count == 1)
        #expect(h.answered == [1])
        h.run(h.instance.onServerMessage(.pushResult(PushResult(req: 999, results: [
            OpResult(key: "nobody", outcome: .rejected, reason: "x"),
        ])), now: h.now))
        h.run(h.instance.onServerMessage(.registered(Registered(device: "b")), now: h.now))
        #expect(h.events("reply.stale").count == 1)
        #expect(h.events("message.unexpected").count == 1)
        #expect(try h.status(saved.key) == .completed)
        #expect(try h.ledger.cursor() == 1)
    }

    @Test func aReplyMissingAKeyLeavesThatOpUnknown() throws {
        let h = try DeviceHarness(platform: .android, settings: foregroundSettings())
        h.start()
        h.serverAnswers = false
        let first = try h.edit("d1")
        guard case .push(let push) = h.outbox.last else {
            Issue.record("expected a push, got \(h.outbox)")
            return
        }
        let result = PushResult(req: push.req, results: [OpResult(key: "someone-else", outcome: .applied, seq: 1)])
        h.run(h.instance.onServerMessage(.pushResult(result), now: h.now))
        #expect(try h.status(first.key) == .confirmationDelayed)
        #expect(h.events("op.result").last?["reason"] == "the reply had no result for this key")
    }
}

