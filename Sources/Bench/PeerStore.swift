import Foundation
import SQLite

/// A peer device's SQLite state, WAL with synchronous=normal as the lab's devices run: drafts, the outbox of ops
/// with their idempotency keys, and the cursor. The commits are the lab's push path's: the edit and its op in one
/// transaction on the sender, the server's answer in another, and on a receiver a page with its cursor in one.
final class PeerStore {
    let database: Database

    init(path: String) throws {
        database = try Database(path: path, synchronous: .normal)
        try database.execute("""
            CREATE TABLE IF NOT EXISTS drafts(id TEXT PRIMARY KEY, body TEXT NOT NULL, version INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS ops(key TEXT PRIMARY KEY, draft TEXT NOT NULL, body TEXT NOT NULL,
                                           status TEXT NOT NULL, ref TEXT);
            CREATE TABLE IF NOT EXISTS state(name TEXT PRIMARY KEY, value TEXT NOT NULL);
            """)
    }

    /// The user's edit and the op that will carry it, in one commit.
    func save(_ change: PeerChange) throws {
        try database.transaction {
            _ = try database.run("""
                INSERT INTO drafts(id, body, version) VALUES (?, ?, 1)
                ON CONFLICT(id) DO UPDATE SET body = excluded.body, version = version + 1
                """, change.draft, change.body)
            _ = try database.run("INSERT INTO ops(key, draft, body, status) VALUES (?, ?, ?, 'pending')",
                                 change.key, change.draft, change.body)
        }
    }

    /// The server's answer for an op: applied at `ref` (a stream sequence or id), in one commit.
    func applied(key: String, ref: String) throws {
        try database.transaction {
            _ = try database.run("UPDATE ops SET status = 'applied', ref = ? WHERE key = ?", ref, key)
        }
    }

    /// Where this device's pulls start; nil before its first page.
    func cursor() throws -> String? {
        try database.first("SELECT value FROM state WHERE name = 'cursor'") { $0.string(0) }
    }

    /// A page of changes and the cursor after it, in one commit.
    func apply(_ changes: [PeerChange], cursor: String) throws {
        try database.transaction {
            for change in changes {
                _ = try database.run("""
                    INSERT INTO drafts(id, body, version) VALUES (?, ?, 1)
                    ON CONFLICT(id) DO UPDATE SET body = excluded.body, version = version + 1
                    """, change.draft, change.body)
            }
            _ = try database.run("""
                INSERT INTO state(name, value) VALUES ('cursor', ?) ON CONFLICT(name) DO UPDATE SET value = \
                excluded.value
                """, cursor)
        }
    }
}
