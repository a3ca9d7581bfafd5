import Foundation
import LabTestSupport
import SQLite
import SyncProtocol
import Testing
@testable import Launcher

/// A real run folder (quickstart, real processes), re-checked after one tampering at a time with its databases or its
/// events: each tampering fails the check it breaks, with a counter-example, and the untouched folder passes.
@Suite(.serialized) struct TamperTests {
    /// One real run, shared by every test of the suite (each works on a copy).
    static let original: Result<EndToEndTests.Run, Error> = Result {
        let run = try EndToEndTests.run("quickstart", in: .lastingTheProcess())
        guard run.status == 0 else { throw TestFailure("quickstart failed: \(run.failedInvariants)\n\(run.output)") }
        return run
    }

    /// This test's folder (each test has an instance of the suite of its own).
    let scratch = TempFolder()

    /// A fresh copy of the passing run folder.
    func copy() throws -> RunFolder {
        let target = scratch.file("run")
        try FileManager.default.copyItem(atPath: try Self.original.get().folder, toPath: target)
        return RunFolder(root: target)
    }

    func check(_ folder: RunFolder) throws -> Report { try Report.make(folder: folder) }

    /// The report on a copy of the run after `statement` on the server's database, or on `device`'s ledger.
    func checkAfter(sql statement: String, onDevice device: String? = nil) throws -> Report {
        let folder = try copy()
        try sql(device.map(folder.devicePath) ?? folder.path("server.sqlite"), statement)
        return try check(folder)
    }

    /// The report on a copy of the run whose events `edit` rewrote.
    func checkAfter(editingEvents edit: ([String]) -> [String]) throws -> Report {
        let folder = try copy()
        try editEvents(folder, edit)
        return try check(folder)
    }

    /// The events of the folder, rewritten by `edit` (one JSON object a line).
    func editEvents(_ folder: RunFolder, _ edit: ([String]) -> [String]) throws {
        let path = folder.path("events.jsonl")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        try (edit(lines).joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    func sql(_ path: String, _ statement: String) throws {
        let db = try Database(path: path)
        try db.execute(statement)
    }

    /// Exactly `name` fails (others may fail too when `alone` is false), and its detail says `words`.
    func expectFails(_ report: Report, _ name: String, _ words: String, alone: Bool = true,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        let result = report.invariant(name)
        #expect(result?.held == false, "\(name) should fail", sourceLocation: sourceLocation)
        #expect(result?.detail.contains(words) == true, "\(result?.detail ?? "")", sourceLocation: sourceLocation)
        if alone {
            let others = report.invariants.filter { !$0.held && $0.name != name }.map { "\($0.name): \($0.detail)" }
            #expect(others.isEmpty, "\(others)", sourceLocation: sourceLocation)
        }
        #expect(!report.passed, sourceLocation: sourceLocation)
    }

    @Test func theUntouchedRunPasses() throws {
        let folder = try copy()
        let report = try check(folder)
        #expect(report.passed, "\(report.invariants.filter { !$0.held }.map(\.detail))")
    }

    @Test func aServerChangeUnderAKeyNoDeviceSaved() throws {
        let report = try checkAfter(sql: "UPDATE changes SET op_key = 'forged-key' WHERE seq = 1")
        expectFails(report, "exactly-once", "applied under key forged-key, which no op saved on", alone: false)
    }

    /// The order of two applied ops swapped: iphone's create of "ideas" now comes after pixel's update of it. The
    /// draft the server holds no longer follows from its changes in their order (intent), besides the seqs the
    /// server reported (exactly-once) and the shadows (cursor-safety).
    @Test func theOrderOfTwoAppliedOpsSwapped() throws {
        let folder = try copy()
        let server = try Database(path: folder.path("server.sqlite"))
        let seqs = try server.first("SELECT group_concat(seq) FROM (SELECT seq FROM changes WHERE draft = 'ideas' "
                                    + "ORDER BY seq)") { $0.string(0) }
        try #require(seqs == "3,4", "quickstart's two edits of ideas are seqs 3 and 4, got \(seqs ?? "none")")
        try server.execute("UPDATE changes SET seq = -seq WHERE draft = 'ideas'; "
                           + "UPDATE changes SET seq = 7 + seq WHERE draft = 'ideas'")
        let report = try check(folder)
        expectFails(report, "intent", "draft ideas of ada ends \"Ideas\" / \"a sync lab, with a verdict\" on the "
            + "server, but the users' edits in the order each device saved them give \"Ideas\" / \"a sync lab\"",
            alone: false)
    }

    @Test func aChangeRemovedFromTheServer() throws {
        let report = try checkAfter(sql: "DELETE FROM changes WHERE seq = 1")
        expectFails(report, "exactly-once", "follows seq 0", alone: false)
    }

    @Test func aRemovedShadowRow() throws {
        let report = try checkAfter(sql: "DELETE FROM shadow WHERE id = (SELECT min(id) FROM shadow)",
                                    onDevice: "laptop")
        expectFails(report, "cursor-safety", "laptop at the end: cursor")
    }

    @Test func needsAttentionOnAnAppliedOp() throws {
        let report = try checkAfter(sql: """
            UPDATE ops SET status = 'needsAttention', last_error = 'not confirmed'
            WHERE local_seq = (SELECT min(local_seq) FROM ops)
            """, onDevice: "pixel")
        expectFails(report, "no-lost-edit", "although the server applied it")
    }

    @Test func anOpErasedFromLedgerAndDeviceEvents() throws {
        let folder = try copy()
        // The last op pixel saved disappears from its ledger and its op.saved event; the server applied it, and the
        // launcher's record of the edit it asked for is left: the device's durable record lost a saved op.
        let key = try Database(path: folder.devicePath("pixel")).first("SELECT key FROM ops ORDER BY local_seq DESC") {
            $0.string(0)
        }
        let k = try #require(key)
        try sql(folder.devicePath("pixel"), "DELETE FROM ops WHERE key = '\(k)'")
        try sql(folder.path("server.sqlite"), "DELETE FROM applied_ops WHERE key = '\(k)'")
        try editEvents(folder) { lines in lines.filter { !($0.contains("\"op.saved\"") && $0.contains(k)) } }
        let report = try check(folder)
        let result = report.invariant("no-lost-edit")
        #expect(result?.held == false)
        #expect(result?.violations.contains { $0.text.contains("op \(k)") && $0.text.contains("gone from its ledger") }
            == true, "\(result?.detail ?? "")")
    }

    @Test func theLastCursorMoveRemovedFromTheEvents() throws {
        let report = try checkAfter { lines in
            guard let last = lines.lastIndex(where: { $0.contains("\"cursor.moved\"")
                && $0.contains("\"proc\":\"iphone\"") })
            else { return lines }
            var edited = lines
            edited.remove(at: last)
            return edited
        }
        expectFails(report, "cursor-safety", "a cursor move that no event explains")
    }

    @Test func aReplicaEditedBehindTheLedgersBack() throws {
        let report = try checkAfter(sql: "UPDATE drafts SET body = 'tampered' WHERE id = (SELECT min(id) FROM drafts)",
                                    onDevice: "iphone")
        expectFails(report, "convergence", "body differs")
    }

    @Test func aHintWithDataInTheEvents() throws {
        let report = try checkAfter { lines in
            guard let first = lines.firstIndex(where: { $0.contains("\"hint.received\"") }) else { return lines }
            var edited = lines
            edited[first] = edited[first].replacingOccurrences(of: #""keys":["account","head","hint"]"#,
                                                                with: #""keys":["account","body","head","hint"]"#)
            return edited
        }
        expectFails(report, "hints-are-references", "carrying data: body")
    }

    @Test func aHintFateRemovedFromTheEvents() throws {
        let report = try checkAfter { lines in
            guard let first = lines.firstIndex(where: { $0.contains("\"hint.delivered\"") }) else { return lines }
            var edited = lines
            edited.remove(at: first)
            return edited
        }
        expectFails(report, "hints-accounted", "the broker counts", alone: false)
    }

    @Test func aQuiesceThatNeverEnded() throws {
        let report = try checkAfter { lines in lines.filter { !$0.contains("\"quiesce.done\"") } }
        expectFails(report, "quiesce-settles", "never quiesced")
    }
}
