import Foundation
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
        let server = try ServerProcess()
        try server.start()
        let client = try ResendingClient(server: server)
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

/// A device-like client: a DEALER with a timeout that resends unacknowledged ops with the same keys, reconnecting
/// and saying hello again whenever the server stops answering or has forgotten it.
final class ResendingClient {
    let server: ServerProcess
    var client: TestClient
    var authenticated = false
    private(set) var resends = 0
    static let timeoutMs = 400

    init(server: ServerProcess) throws {
        self.server = server
        client = try server.client()
    }

    /// Pushes `ops` until every one is acknowledged (applied or duplicate); `afterFirstSend` runs once, right after
    /// the first attempt went out (the test kills the server there).
    func push(_ ops: [Op], afterFirstSend: (() throws -> Void)? = nil, budgetSeconds: Double = 60) throws
        -> [OpResult]
    {
        var hook = afterFirstSend
        let deadline = Date().addingTimeInterval(budgetSeconds)
        var attempts = 0
        while Date() < deadline {
            if !authenticated {
                guard case .welcome? = try client.hello("pixel", "acme", "t-pixel", timeoutMs: Self.timeoutMs) else {
                    try client.reconnect()
                    continue
                }
                authenticated = true
            }
            let req = client.req()
            try client.send(.push(Push(req: req, ops: ops)))
            attempts += 1
            if attempts > 1 { resends += 1 }
            if let run = hook {
                hook = nil
                try run()
            }
            switch try awaitReply(req) {
            case .pushResult(let result)?:
                if result.results.allSatisfy({ $0.outcome == .applied || $0.outcome == .duplicate }) {
                    return result.results
                }
            case .error(let error)? where error.code == .notAuthenticated:
                authenticated = false
            case .error(let error)?:
                throw TestFailure.setup("push refused: \(error.message)")
            case nil:
                // Unknown outcome: maybe applied, maybe not. A new connection and a resend with the same keys.
                try client.reconnect()
                authenticated = false
            case .some(let other):
                throw TestFailure.setup("unexpected reply \(other)")
            }
        }
        throw TestFailure.setup("ops not acknowledged within \(budgetSeconds)s: \(server.serverLog)")
    }

    private func awaitReply(_ req: Int) throws -> Message? {
        let deadline = SimClock.monotonicNanos() + UInt64(Self.timeoutMs) * 1_000_000
        while SimClock.monotonicNanos() < deadline {
            let left = Int((deadline - SimClock.monotonicNanos()) / 1_000_000)
            guard let message = try client.receive(timeoutMs: max(left, 1)) else { return nil }
            // Replies to earlier attempts (stale welcomes, late results) are skipped.
            if TestClient.req(of: message) == req { return message }
        }
        return nil
    }
}
