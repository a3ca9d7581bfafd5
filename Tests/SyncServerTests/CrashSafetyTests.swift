import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncProtocol
import Testing
import ZeroMQ

@testable import SyncServer

/// The server is SIGKILLed at random moments while a client pushes; every op must still be applied exactly once.
@Suite("crash safety", .serialized)
struct CrashSafetyTests {
    static let opCount = 2_000
    static let batchSize = 10
    static let kills = 24

    @Test("2,000 ops pushed through 24 SIGKILLs and restarts: each key applied once, seq gap-free, file sound")
    func killedServerAppliesEveryOpOnce() throws {
        let server = try ServerProcess.started()
        let client = try Resender(server: server)
        var random = SeededGenerator(seed: 20_240_601)

        let ops = (0..<Self.opCount).map { n in
            // Twenty drafts edited over and over, so ops and their changes interleave on shared rows.
            Op(key: "key-\(n)", draft: "draft-\(n % 20)", action: .update, base: 0, title: "t\(n)", body: "body \(n)")
        }
        let batches = stride(from: 0, to: ops.count, by: Self.batchSize).map {
            Array(ops[$0..<min($0 + Self.batchSize, ops.count)])
        }
        // Seeded kill points: after sending batch i, wait a random 0–3 ms (before, during or after its commit), kill.
        var killAt: Set<Int> = []
        while killAt.count < Self.kills { killAt.insert(Int(random.next() % UInt64(batches.count - 1))) }

        var results: [String: OpResult] = [:]
        var killed = 0
        var answeredBeforeKill = 0
        var committedReplyLost = 0
        var lostBeforeCommit = 0
        for (index, batch) in batches.enumerated() {
            let kill: (() throws -> Void)? = killAt.contains(index) ? {
                usleep(UInt32(random.next() % 3_000))
                server.kill9()
                killed += 1
                try server.start(waitReady: false)
            } : nil
            let before = client.resends
            let outcome = try client.push(batch, afterFirstSend: kill)
            if kill != nil {
                // Where the kill landed, judged by what the resend found.
                if client.resends == before {
                    answeredBeforeKill += 1
                } else if outcome.contains(where: { $0.outcome == .duplicate }) {
                    committedReplyLost += 1
                } else {
                    lostBeforeCommit += 1
                }
            }
            for result in outcome {
                #expect(result.outcome == .applied || result.outcome == .duplicate, "\(result)")
                results[result.key] = result
            }
        }
        #expect(killed == Self.kills)
        #expect(answeredBeforeKill + committedReplyLost + lostBeforeCommit == Self.kills)
        // Kills that only ever hit an idle server would prove nothing.
        let landed = "kills: \(answeredBeforeKill) after the reply, \(committedReplyLost) after the commit, "
            + "\(lostBeforeCommit) before it"
        #expect(committedReplyLost + lostBeforeCommit > 0, "\(landed)")
        #expect(results.count == Self.opCount)
        #expect(server.terminate() == 0)

        let database = try Database(path: server.db)
        #expect(try database.integrityCheck() == "ok")
        #expect(try database.scalarInt("SELECT count(*) FROM changes") == Self.opCount)
        #expect(try database.scalarInt("SELECT count(*) FROM applied_ops") == Self.opCount)
        #expect(try database.scalarInt("SELECT count(DISTINCT op_key) FROM changes") == Self.opCount)
        let twice = "SELECT count(*) FROM (SELECT op_key FROM changes GROUP BY op_key HAVING count(*) > 1)"
        #expect(try database.scalarInt(twice) == 0)
        let seqs = try database.query("SELECT seq FROM changes WHERE account = 'acme' ORDER BY seq") { $0.int(0) }
        #expect(seqs == Array(1...Self.opCount), "seq is gap-free")
        #expect(try database.scalarInt("SELECT head FROM accounts WHERE id = 'acme'") == Self.opCount)
        // Every result the client got back names the change that recorded its key.
        var mismatches = 0
        try database.forEach("SELECT op_key, seq FROM changes") { row in
            if results[row.string(0)]?.seq != row.int(1) { mismatches += 1 }
        }
        #expect(mismatches == 0)
        // Each draft's last writer is its newest change: drafts and changes committed together.
        let torn = try database.scalarInt("""
            SELECT count(*) FROM drafts d WHERE d.version != (SELECT count(*) FROM changes c
                WHERE c.account = d.account AND c.draft = d.id)
            """)
        #expect(torn == 0)
        #expect(client.resends >= Self.kills / 2, "kills cost resends: \(client.resends)")
    }
}
