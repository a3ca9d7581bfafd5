import Foundation
import LabKit
import LabTestSupport
import SQLite
import SyncProtocol
import Testing
@testable import SyncDevice

/// The ledger on real SQLite files, one fresh folder per test.
@Suite struct LedgerTests {
    let identity = DeviceIdentity(device: "pixel", account: "acme", token: "t", platform: .android)

    func withLedger(_ body: (Ledger, String) throws -> Void) throws {
        let folder = TempFolder()
        let path = folder.file("device.sqlite")
        let ledger = try Ledger(path: path)
        _ = try ledger.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                               settings: DeviceSettings(), now: 0)
        try body(ledger, path)
    }

    func request(_ now: Double, limit: Int = 10, lease: Double = 30) -> ClaimRequest {
        ClaimRequest(purpose: .pass(1), limit: limit, now: now, leaseSec: lease, ignoreBackoff: false)
    }

    @Test func anEditCommitsTheOpAndTheReplicaTogetherWithAKeyMadeOnce() throws {
        try withLedger { ledger, _ in
            let first = try ledger.save(LocalEdit(draft: "d1", action: .create, title: "a", body: "x"), device: "pixel",
                                        wall: 1)
            let second = try ledger.save(LocalEdit(draft: "d1", action: .update, title: "b"), device: "pixel", wall: 2)
            #expect(first.key != second.key)
            #expect(first.base == 0 && second.base == 1)
            #expect(try ledger.op(first.key)?.status == .savedOnDevice)
            #expect(try ledger.drafts() == [DraftRow(id: "d1", title: "b", body: "x", version: 2, deleted: false)])
            // An update of a draft this device never saw is recorded too: the server decides.
            let blind = try ledger.save(LocalEdit(draft: "new", action: .update, title: "t"), device: "pixel", wall: 3)
            #expect(blind.base == 0)
            #expect(try ledger.counts()[.savedOnDevice] == 3)
            // The key is what the claim sends, every time.
            let claimed = try ledger.claim(request(0))
            #expect(claimed.ops.map(\.op.key) == [first.key, second.key, blind.key])
        }
    }

    @Test func settlingAPulledChangeFindsItsOpByIndexNotByScanningEveryOp() throws {
        try withLedger { ledger, _ in
            let plan = try ledger.database.query("EXPLAIN QUERY PLAN " + Ledger.settleSQL, 1, 1, "k", "k") {
                $0.string(3)
            }
            #expect(!plan.contains { $0.hasPrefix("SCAN") }, "the settle scans ops: \(plan)")
            #expect(plan.contains { $0.contains("ops_wire_key") }, "\(plan)")
            #expect(plan.contains { $0.contains("sqlite_autoindex_ops") }, "\(plan)")
        }
    }

    @Test func aClaimReadsOnlyTheUnsettledOpsNotEveryOpEverSaved() throws {
        try withLedger { ledger, _ in
            for (sql, values) in [(Ledger.reclaimSQL, [SQLValue.real(1)]), (Ledger.strandedSQL, [])] {
                var plan: [String] = []
                try ledger.database.forEach("EXPLAIN QUERY PLAN " + sql, values: values) { plan.append($0.string(3)) }
                #expect(plan == ["SCAN ops USING INDEX ops_unsettled"], "\(sql): \(plan)")
            }
        }
    }

    @Test func rebuildingADraftReadsOnlyThatDraftsOps() throws {
        try withLedger { ledger, _ in
            var plan: [String] = []
            try ledger.database.forEach("EXPLAIN QUERY PLAN " + Ledger.rebuildSQL, values: [.text("d"), .integer(1)]) {
                plan.append($0.string(3))
            }
            #expect(plan == ["SEARCH ops USING INDEX ops_draft (draft=?)"], "\(plan)")
        }
    }

    @Test func aReceiversReplicaCopyReadsOnlyThatDraftsShadowRow() throws {
        try withLedger { ledger, _ in
            var plan: [String] = []
            try ledger.database.forEach("EXPLAIN QUERY PLAN " + Ledger.copyShadowSQL, values: [.text("d")]) {
                plan.append($0.string(3))
            }
            #expect(plan == ["SEARCH shadow USING PRIMARY KEY (id=?)"], "\(plan)")
        }
    }

    @Test func aClaimHoldsALeaseAndAnExpiredLeaseIsReclaimed() throws {
        try withLedger { ledger, _ in
            for index in 1...3 {
                _ = try ledger.save(LocalEdit(draft: "d\(index)", action: .create, title: "t"), device: "pixel",
                                    wall: 1)
            }
            let first = try ledger.claim(request(100))
            #expect(first.ops.count == 3)
            #expect(first.ops.allSatisfy { $0.attempt == 1 })
            let held = try #require(try ledger.op(first.ops[0].op.key))
            #expect(held.status == .sending)
            #expect(held.leaseExpiresSim == 130)
            #expect(held.leaseOwner?.hasPrefix(ledger.leaseOwner) == true)
            // While the lease holds, nobody else gets these ops.
            let during = try ledger.claim(request(120))
            #expect(during.ops.isEmpty && during.reclaimed == 0)
            // The pass died; once the lease expires the next pass reclaims and resends them.
            let after = try ledger.claim(request(131))
            #expect(after.reclaimed == 3)
            #expect(after.ops.map(\.op.key) == first.ops.map(\.op.key))
            #expect(after.ops.allSatisfy { $0.attempt == 2 })
        }
    }

    @Test func aClaimThatFindsNothingWritesNothingNotEvenThePassRow() throws {
        try withLedger { ledger, path in
            func walSize() -> Int64 {
                let attributes = try? FileManager.default.attributesOfItem(atPath: path + "-wal")
                return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            }
            let before = walSize()
            var begins = request(5)
            begins.beginsPass = .push
            let empty = try ledger.claim(begins)
            #expect(empty.passDeferred && empty.ops.isEmpty)
            #expect(try ledger.passes().isEmpty)
            #expect(walSize() == before)
            // Its end makes the row (the pass wrote nothing else).
            try ledger.endPass(PassRecord(id: 1, trigger: .push, started: 5, ended: 6, outcome: .completed, sent: 0,
                                          pulled: 0, cutOff: false, success: true, cursor: 0, head: 0,
                                          nextDesired: nil))
            #expect(try ledger.passes().map { "\($0.id) \($0.trigger) \($0.started) \($0.outcome?.rawValue ?? "-")" }
                == ["1 push 5.0 completed"])
            // A claim that claims something records its pass's start in its own transaction, as before.
            _ = try ledger.save(LocalEdit(draft: "d1", action: .create, title: "t"), device: "pixel", wall: 1)
            var second = ClaimRequest(purpose: .pass(2), limit: 10, now: 7, leaseSec: 30, ignoreBackoff: false)
            second.beginsPass = .manual
            let claimed = try ledger.claim(second)
            #expect(!claimed.passDeferred && claimed.ops.count == 1)
            #expect(try ledger.passes().last.map { "\($0.id) \($0.trigger) \($0.ended == nil)" } == "2 manual true")
        }
    }

    @Test func anIdleClaimIsAReadAndOnlyWhenNothingIsUnsettled() throws {
        try withLedger { ledger, _ in
            var begins = request(5)
            begins.beginsPass = .push
            #expect(try ledger.idleClaim(begins) == ClaimResult(purpose: .pass(1), ops: [], reclaimed: 0,
                                                                passDeferred: true))
            #expect(try ledger.idleClaim(request(5)) == nil)  // a claim that does not begin its pass runs as before
            // The idle answer above is remembered (`knownIdle`); a save must forget it.
            let saved = try ledger.save(LocalEdit(draft: "d1", action: .create, title: "t"), device: "pixel", wall: 1)
            #expect(try ledger.idleClaim(begins) == nil)
            _ = try ledger.claim(begins)  // the op is `sending` now, under a lease: still unsettled
            #expect(try ledger.idleClaim(begins) == nil)
            // Settled: idle again, read anew.
            try ledger.record([OpOutcome(key: saved.key, kind: .acknowledged(seq: 1))], wall: 2)
            #expect(try ledger.idleClaim(begins) == ClaimResult(purpose: .pass(1), ops: [], reclaimed: 0,
                                                                passDeferred: true))
            // A second edit after an idle answer: the save forgets it again.
            _ = try ledger.save(LocalEdit(draft: "d2", action: .create, title: "t"), device: "pixel", wall: 3)
            #expect(try ledger.idleClaim(begins) == nil)
        }
    }

    @Test func aLeaseSurvivesAReopenAndIsReclaimedByTheNextProcess() throws {
        let folder = TempFolder()
        let path = folder.file("device.sqlite")
        do {
            let ledger = try Ledger(path: path)
            _ = try ledger.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                                   settings: DeviceSettings(), now: 0)
            _ = try ledger.save(LocalEdit(draft: "d1", action: .create, title: "t"), device: "pixel", wall: 1)
            try ledger.beginPass(id: 1, trigger: .push, at: 5)
            _ = try ledger.claim(request(5))
        }  // the process "dies" here: no outcome recorded, the pass never ended
        let reopened = try Ledger(path: path)
        let restored = try reopened.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                                            settings: DeviceSettings(), now: 50)
        #expect(restored.nextPassID == 2)
        let outcome = try reopened.database.first("SELECT outcome FROM passes WHERE id = 1") { $0.string(0) }
        #expect(outcome == "interrupted")
        let claim = try reopened.claim(ClaimRequest(purpose: .pass(2), limit: 10, now: 50, leaseSec: 30,
                                                    ignoreBackoff: false))
        #expect(claim.reclaimed == 1)
        #expect(claim.ops.first?.attempt == 2)
        #expect(throws: DeviceError.self) {
            try reopened.prepare(identity: DeviceIdentity(device: "other", account: "acme", token: "t", platform: .ios),
                                 clock: SimClock(epochMicros: 0, scale: 1), settings: DeviceSettings(), now: 0)
        }
    }

    @Test func backoffAndDraftOrderDecideWhatIsClaimed() throws {
        try withLedger { ledger, _ in
            let a1 = try ledger.save(LocalEdit(draft: "a", action: .create, title: "1"), device: "pixel", wall: 1)
            let a2 = try ledger.save(LocalEdit(draft: "a", action: .update, title: "2"), device: "pixel", wall: 1)
            let b1 = try ledger.save(LocalEdit(draft: "b", action: .create, title: "1"), device: "pixel", wall: 1)
            _ = try ledger.claim(request(0))
            try ledger.record([OpOutcome(key: a1.key, kind: .retry(at: 100, reason: "busy")),
                               OpOutcome(key: a2.key, kind: .unknown(retryAt: 0, reason: "timeout")),
                               OpOutcome(key: b1.key, kind: .acknowledged(seq: 7))], wall: 2)
            // a1 backs off until 100 and a2 must not overtake it.
            #expect(try ledger.claim(request(50)).ops.isEmpty)
            let forced = try ledger.claim(ClaimRequest(purpose: .pass(2), limit: 10, now: 50, leaseSec: 30,
                                                       ignoreBackoff: true))
            #expect(forced.ops.map(\.op.key) == [a1.key, a2.key])
            #expect(try ledger.op(b1.key)?.resultSeq == 7)
            #expect(try ledger.metrics(now: 60).first { $0.0 == "unknownOutcomes" }?.1 == 1)
        }
    }

    @Test func aSettledOpIsNeverMovedBack() throws {
        try withLedger { ledger, _ in
            let saved = try ledger.save(LocalEdit(draft: "d", action: .create, title: "t"), device: "pixel", wall: 1)
            _ = try ledger.claim(request(0))
            try ledger.record([OpOutcome(key: saved.key, kind: .acknowledged(seq: 1))], wall: 2)
            try ledger.record([OpOutcome(key: saved.key, kind: .unknown(retryAt: 0, reason: "late timeout"))], wall: 3)
            try ledger.record([OpOutcome(key: saved.key, kind: .needsAttention(reason: "late"))], wall: 3)
            #expect(try ledger.op(saved.key)?.status == .completed)
        }
    }

    func change(_ seq: Int, _ draft: String, _ action: DraftAction = .create, title: String? = "t", key: String? = nil)
        -> Change
    {
        Change(seq: seq, draft: draft, action: action, version: seq, title: title, body: "b", origin: "other",
               key: key ?? "other-\(seq)", conflict: false)
    }

    @Test func aPageAndTheCursorMoveInOneTransaction() throws {
        try withLedger { ledger, _ in
            try ledger.apply(PageApplication(changes: [change(1, "d1"), change(2, "d2")], from: 0, to: 2, pass: 1),
                             wall: 1)
            #expect(try ledger.cursor() == 2)
            #expect(try ledger.drafts().map(\.id) == ["d1", "d2"])
            // A page that does not start at the cursor changes nothing.
            #expect(throws: DeviceError.cursorMoved(expected: 0, found: 2)) {
                try ledger.apply(PageApplication(changes: [change(1, "x")], from: 0, to: 1, pass: 2), wall: 1)
            }
            // A failure in the middle of the transaction (here a trigger refusing the cursor write) rolls the
            // replica back too: the cursor never moves without the page, nor the page without the cursor.
            try ledger.database.execute("""
                CREATE TRIGGER refuse_cursor BEFORE UPDATE ON state WHEN NEW.key = 'cursor'
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
                """)
            #expect(throws: SQLiteError.self) {
                try ledger.apply(PageApplication(changes: [change(3, "d3")], from: 2, to: 3, pass: 3), wall: 1)
            }
            try ledger.database.execute("DROP TRIGGER refuse_cursor")
            #expect(try ledger.cursor() == 2)
            #expect(try ledger.drafts().map(\.id) == ["d1", "d2"])
            #expect(try ledger.database.scalarInt("SELECT count(*) FROM shadow WHERE id = 'd3'") == 0)
        }
    }

    /// A ledger that never saved an op (every receiver) copies each shadow row to the replica within SQLite; one with
    /// an op reads the row back and replays its ops. With nothing to replay both must leave the same replica.
    @Test func aLedgerWithNoOpLeavesTheReplicaARebuildWould() throws {
        try withLedger { receiver, _ in
            try withLedger { editor, _ in
                // The editor's own op is on a draft no page touches: nothing to replay on d1 or d2, but it has ops.
                _ = try editor.save(LocalEdit(draft: "own", action: .create, title: "o"), device: "pixel", wall: 1)
                func change(_ seq: Int, _ draft: String, _ action: DraftAction, _ title: String?, _ body: String?)
                    -> Change
                {
                    Change(seq: seq, draft: draft, action: action, version: seq, title: title, body: body,
                           origin: "other", key: "other-\(seq)", conflict: false)
                }
                let pages = [
                    [change(1, "d1", .create, "a", "x"), change(2, "d2", .create, "b", nil)],
                    // An update keeps what it does not carry; a delete keeps the row, marked.
                    [change(3, "d1", .update, nil, "y"), change(4, "d2", .delete, nil, nil)],
                    // A create over a deleted draft; two changes of one draft in one page.
                    [change(5, "d2", .create, "c", "z"), change(6, "d1", .update, "e", nil),
                     change(7, "d1", .update, nil, "w")],
                ]
                var seq = 0
                for (index, changes) in pages.enumerated() {
                    let page = PageApplication(changes: changes, from: seq, to: seq + changes.count, pass: index + 1)
                    seq += changes.count
                    try receiver.apply(page, wall: 1)
                    try editor.apply(page, wall: 1)
                    #expect(receiver.knownEmpty == true && editor.knownEmpty == false, "both ways taken")
                    #expect(try receiver.drafts() == editor.drafts().filter { $0.id != "own" }, "after page \(index)")
                    #expect(try receiver.cursor() == seq)
                }
                #expect(try receiver.drafts() == [
                    DraftRow(id: "d1", title: "e", body: "w", version: 7, deleted: false),
                    DraftRow(id: "d2", title: "c", body: "z", version: 5, deleted: false),
                ])
            }
        }
    }

    /// Draft "d" created on this device ("pixel"), sent, and its reply lost: the op waits, its outcome unknown.
    func sentWithReplyLost(_ ledger: Ledger) throws -> SavedEdit {
        let mine = try ledger.save(LocalEdit(draft: "d", action: .create, title: "mine", body: "m"), device: "pixel",
                                   wall: 1)
        _ = try ledger.claim(request(0))
        try ledger.record([OpOutcome(key: mine.key, kind: .unknown(retryAt: 0, reason: "reply lost"))], wall: 2)
        return mine
    }

    @Test func aPulledChangeSettlesTheOpItCameFromAndRebuildsTheReplica() throws {
        try withLedger { ledger, _ in
            let mine = try sentWithReplyLost(ledger)
            // Another device's edit of another draft, then my own change comes back: no resend needed.
            let settled = try ledger.apply(PageApplication(
                changes: [change(1, "e"), Change(seq: 2, draft: "d", action: .create, version: 1, title: "mine",
                                                 body: "m", origin: "pixel", key: mine.key, conflict: false)],
                from: 0, to: 2, pass: 1), wall: 3)
            #expect(settled == [mine.key])
            #expect(try ledger.op(mine.key)?.status == .completed)
            #expect(try ledger.drafts() == [DraftRow(id: "d", title: "mine", body: "m", version: 1, deleted: false),
                                            DraftRow(id: "e", title: "t", body: "b", version: 1, deleted: false)])
        }
    }

    /// A change settles only this device's ops: the server writes the sender as its origin and refuses a key another
    /// device used, so a change of another origin is never one of them and its settle statement is skipped.
    @Test func onlyAChangeOfThisDevicesOriginSettlesAnOp() throws {
        try withLedger { ledger, _ in
            let mine = try sentWithReplyLost(ledger)
            func change(_ seq: Int, origin: String) -> Change {
                Change(seq: seq, draft: "d", action: .update, version: seq, title: "t\(seq)", body: nil,
                       origin: origin, key: mine.key, conflict: false)
            }
            let foreign = try ledger.apply(PageApplication(changes: [change(1, origin: "other")], from: 0, to: 1,
                                                           pass: 1), wall: 3)
            #expect(foreign.isEmpty)
            #expect(try ledger.op(mine.key)?.status != .completed)
            let own = try ledger.apply(PageApplication(changes: [change(2, origin: "pixel")], from: 1, to: 2, pass: 2),
                                       wall: 4)
            #expect(own == [mine.key])
            #expect(try ledger.op(mine.key)?.status == .completed)
            // The replica is the shadow the upsert returned (the server's rows: no body was ever sent), with no op
            // left to replay on it.
            #expect(try ledger.drafts() == [DraftRow(id: "d", title: "t2", body: nil, version: 2, deleted: false)])
        }
    }

    /// Read your writes (issue 30): an acknowledged edit whose change is above the cursor stays in the replica when
    /// a page that ends below it touches its draft; `ownWrites: untilPulled` leaves it out and says which.
    @Test(arguments: [DeviceSettings.OwnWrites.keep, .untilPulled])
    func anAcknowledgedEditAboveTheCursorStaysVisible(ownWrites: DeviceSettings.OwnWrites) throws {
        try withLedger { ledger, _ in
            var settings = DeviceSettings()
            settings.ownWrites = ownWrites
            _ = try ledger.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1), settings: settings,
                                   now: 0)
            let mine = try ledger.save(LocalEdit(draft: "d", action: .create, title: "mine", body: "m"),
                                       device: "pixel", wall: 1)
            _ = try ledger.claim(request(0))
            try ledger.record([OpOutcome(key: mine.key, kind: .acknowledged(seq: 3))], wall: 2)
            // Another device's create of d, seq 1: the page ends at 1, below my own change at seq 3.
            try ledger.apply(PageApplication(changes: [change(1, "d", title: "theirs")], from: 0, to: 1, pass: 1),
                             wall: 3)
            let title = try ledger.drafts().first?.title
            #expect(title == (ownWrites == .keep ? "mine" : "theirs"))
            #expect(ledger.hiddenOwnWrites.map(\.key) == (ownWrites == .keep ? [] : [mine.key]))
            // Once the page holding it is applied, the shadow has it and nothing is replayed twice.
            try ledger.apply(PageApplication(changes: [change(2, "e"), Change(seq: 3, draft: "d", action: .update,
                version: 2, title: "mine", body: "m", origin: "pixel", key: mine.key, conflict: false)],
                from: 1, to: 3, pass: 2), wall: 4)
            #expect(try ledger.drafts().first == DraftRow(id: "d", title: "mine", body: "m", version: 2,
                                                          deleted: false))
        }
    }

    @Test func aPendingEditStaysVisibleOverPulledChangesAndARejectedOneDisappears() throws {
        try withLedger { ledger, _ in
            try ledger.apply(PageApplication(changes: [change(1, "d", title: "server")], from: 0, to: 1, pass: 1),
                             wall: 1)
            // The first page found no op at all (`knownEmpty`, no replay); the save ends that, or "local" is lost
            // below.
            let mine = try ledger.save(LocalEdit(draft: "d", action: .update, title: "local"), device: "pixel", wall: 2)
            try ledger.apply(PageApplication(changes: [change(2, "d", .update, title: "remote")], from: 1, to: 2,
                                             pass: 2), wall: 3)
            #expect(try ledger.drafts().first?.title == "local")
            #expect(try ledger.drafts().first?.version == 3)
            _ = try ledger.claim(request(0))
            try ledger.record([OpOutcome(key: mine.key, kind: .needsAttention(reason: "rejected"))], wall: 4)
            #expect(try ledger.drafts() == [DraftRow(id: "d", title: "remote", body: "b", version: 2, deleted: false)])
            try ledger.apply(PageApplication(changes: [change(3, "d", .delete, title: nil)], from: 2, to: 3, pass: 3),
                             wall: 5)
            #expect(try ledger.drafts().first?.deleted == true)
            try ledger.apply(PageApplication(changes: [change(4, "d", .create, title: nil)], from: 3, to: 4, pass: 4),
                             wall: 6)
            #expect(try ledger.drafts() == [DraftRow(id: "d", title: nil, body: "b", version: 4, deleted: false)])
        }
    }

    @Test func aPassMovesItsStateRowsTheHeadNeverLowered() throws {
        try withLedger { ledger, _ in
            func state(_ key: String) throws -> JSONValue? {
                try ledger.database.first("SELECT value FROM state WHERE key = ?", key, map: { row in
                    row.isNull(0) ? JSONValue.null : .double(row.double(0))
                })
            }
            try ledger.apply(PageApplication(changes: [change(1, "d1"), change(2, "d2")], from: 0, to: 2, pass: 1),
                             wall: 1)
            #expect(try ledger.cursor() == 2 && state("head") == .double(2))
            func end(_ id: Int, head: Int, success: Bool, next: Double?) throws {
                try ledger.endPass(PassRecord(id: id, trigger: .push, started: 10, ended: Double(10 + id),
                                              outcome: .completed, sent: 0, pulled: 0, cutOff: false,
                                              success: success, cursor: 2, head: head, nextDesired: next))
            }
            try end(1, head: 7, success: true, next: 50)
            #expect(try state("head") == .double(7) && state("next_desired_sim") == .double(50))
            #expect(try state("last_sync_sim") == .double(11))
            // A pass that saw an older head, failed, and wants no next run: the head stays, the sync time too.
            try end(2, head: 3, success: false, next: nil)
            #expect(try state("head") == .double(7) && state("next_desired_sim") == .null)
            #expect(try state("last_sync_sim") == .double(11))
            // A page below the head moves the cursor, not the head.
            try ledger.apply(PageApplication(changes: [change(3, "d3")], from: 2, to: 3, pass: 3), wall: 2)
            #expect(try ledger.cursor() == 3 && state("head") == .double(7))
        }
    }

    @Test func theStatusCommandReadsAStoppedDevice() throws {
        try withLedger { ledger, path in
            _ = try ledger.save(LocalEdit(draft: "d", action: .create, title: "t"), device: "pixel", wall: 1)
            try ledger.beginPass(id: 1, trigger: .foreground, at: 10)
            try ledger.endPass(PassRecord(id: 1, trigger: .foreground, started: 10, ended: 11, outcome: .completed,
                                          sent: 0, pulled: 0, cutOff: false, success: true, cursor: 0, head: 4,
                                          nextDesired: nil))
            try ledger.recordAppOpen(at: 20, dataAge: 9)
            let reader = try Ledger.openExisting(path: path)
            let status = try reader.storedStatus(now: 100)
            #expect(status["device"] == "pixel")
            #expect(status["pending"] == 1)
            #expect(status["ops"]?["savedOnDevice"] == 1)
            #expect(status["freshness"]?["kind"] == "stale" || status["freshness"]?["kind"] == "current")
            #expect(status["metrics"]?["cursorLag"] == 4)
            #expect(status["metrics"]?["passes"]?["byTrigger"]?["foreground"] == 1)
            #expect(status["metrics"]?["dataAgeAtOpen"]?["medianSec"] == 9)
            let text = DeviceStatusCommand.render(status)
            #expect(text.contains("device pixel (android, account acme)"))
            #expect(text.contains("cursor lag 4"))
        }
        #expect(throws: DeviceError.self) { try Ledger.openExisting(path: "/nonexistent/device.sqlite") }
    }

    @Test func theMeasuredHistorySurvivesARestart() throws {
        try withLedger { ledger, path in
            let runs: [(Trigger, Double, Bool)] = [(.periodic, 100, true), (.push, 150, true),
                                                   (.periodic, 1_100, false), (.foreground, 1_500, true),
                                                   (.periodic, 2_000, true)]
            for (index, run) in runs.enumerated() {
                try ledger.beginPass(id: index + 1, trigger: run.0, at: run.1)
                try ledger.endPass(PassRecord(id: index + 1, trigger: run.0, started: run.1, ended: run.1 + 1,
                                              outcome: .completed, sent: 0, pulled: 0, cutOff: false,
                                              success: run.2, cursor: 0, head: 0, nextDesired: nil))
            }
            let restored = try Ledger(path: path).prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                                                          settings: DeviceSettings(), now: 3_000)
            #expect(restored.scheduledRuns == [100, 1_100, 2_000])
            #expect(restored.successTimes == [101, 151, 1_501, 2_001])
            #expect(restored.nextPassID == 6)
        }
    }
}

