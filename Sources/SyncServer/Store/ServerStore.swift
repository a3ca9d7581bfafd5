import LabKit
import SQLite
import SyncProtocol

/// The server's SQLite file: accounts with their heads, devices with their tokens, drafts, the per-account change
/// log and the idempotency records. Belongs to the server's IO thread.
public final class ServerStore {
    public let database: Database
    /// Pages read lately, for the pulls of the same account, cursor and limit that follow (`pull`); every apply
    /// drops its account's pages.
    public let pageCache = PageCache()

    /// Opens (creating) the file at `path` in WAL mode and brings its schema up to date.
    public init(path: String, synchronous: Synchronous = .full) throws(ServerError) {
        do {
            database = try Database(path: path, synchronous: synchronous)
            try database.migrate(ServerStore.migrations)
        } catch {
            throw ServerError.wrap(error)
        }
    }

    static let migrations = [
        Migration(version: 1, sql: """
            CREATE TABLE accounts (
                id TEXT PRIMARY KEY,
                head INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                account TEXT NOT NULL REFERENCES accounts(id),
                platform TEXT NOT NULL,
                token TEXT NOT NULL
            );
            CREATE TABLE drafts (
                account TEXT NOT NULL,
                id TEXT NOT NULL,
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                version INTEGER NOT NULL,
                last_writer TEXT NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (account, id)
            ) WITHOUT ROWID;
            CREATE TABLE changes (
                account TEXT NOT NULL,
                seq INTEGER NOT NULL,
                draft TEXT NOT NULL,
                action TEXT NOT NULL,
                version INTEGER NOT NULL,
                title TEXT,
                body TEXT,
                origin TEXT NOT NULL,
                op_key TEXT NOT NULL,
                conflict INTEGER NOT NULL,
                PRIMARY KEY (account, seq)
            ) WITHOUT ROWID;
            CREATE TABLE applied_ops (
                key TEXT PRIMARY KEY,
                device TEXT NOT NULL,
                account TEXT NOT NULL,
                outcome TEXT NOT NULL,
                seq INTEGER,
                version INTEGER,
                conflict INTEGER,
                reason TEXT
            ) WITHOUT ROWID;
            """),
        // Idempotency keys scoped by account (docs/SECURITY.md): the same key in two accounts is two ops, so one
        // account can neither make another's op fail nor learn that a key exists there.
        Migration(version: 2, sql: """
            CREATE TABLE applied_ops_v2 (
                account TEXT NOT NULL,
                key TEXT NOT NULL,
                device TEXT NOT NULL,
                outcome TEXT NOT NULL,
                seq INTEGER,
                version INTEGER,
                conflict INTEGER,
                reason TEXT,
                PRIMARY KEY (account, key)
            ) WITHOUT ROWID;
            INSERT INTO applied_ops_v2 (account, key, device, outcome, seq, version, conflict, reason)
                SELECT account, key, device, outcome, seq, version, conflict, reason FROM applied_ops;
            DROP TABLE applied_ops;
            ALTER TABLE applied_ops_v2 RENAME TO applied_ops;
            """),
    ]

    // MARK: - Accounts and devices

    /// Loads the accounts file into the database in one transaction (idempotent: loading it twice changes nothing).
    public func load(_ file: AccountsFile) throws(ServerError) {
        do {
            try database.transaction {
                for account in file.accounts { try ensureAccount(account.id) }
                for record in file.records { try upsert(record) }
            }
        } catch {
            throw ServerError.wrap(error)
        }
    }

    /// Adds a device (and its account) or updates its platform and token; refuses to move it to another account.
    public func addDevice(_ record: DeviceRecord) throws(ServerError) {
        do {
            try database.transaction {
                try ensureAccount(record.account)
                try upsert(record)
            }
        } catch {
            throw ServerError.wrap(error)
        }
    }

    private func ensureAccount(_ id: String) throws {
        try database.run("INSERT OR IGNORE INTO accounts (id, head) VALUES (?, 0)", id)
    }

    private func upsert(_ record: DeviceRecord) throws {
        let owner = try database.first("SELECT account FROM devices WHERE id = ?", record.id) { $0.string(0) }
        if let owner, owner != record.account {
            throw ServerError.deviceMoved(device: record.id, from: owner, to: record.account)
        }
        try database.run(
            """
            INSERT INTO devices (id, account, platform, token) VALUES (?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET platform = excluded.platform, token = excluded.token
            """,
            record.id, record.account, record.platform.rawValue, TokenHash.stored(record.token)
        )
    }

    /// Every device, to check hellos against.
    public func devices() throws(ServerError) -> [DeviceRecord] {
        do {
            return try database.query("SELECT id, account, platform, token FROM devices ORDER BY id") { row in
                DeviceRecord(id: row.string(0), account: row.string(1),
                             platform: Platform(rawValue: row.string(2)) ?? .web, token: row.string(3))
            }
        } catch {
            throw ServerError.wrap(error)
        }
    }

    /// Each account's head seq.
    public func heads() throws(ServerError) -> [String: Int] {
        do {
            var heads: [String: Int] = [:]
            try database.forEach("SELECT id, head FROM accounts") { heads[$0.string(0)] = $0.int(1) }
            return heads
        } catch {
            throw ServerError.wrap(error)
        }
    }

    /// The account's head seq (0 for an account without changes or unknown to the database).
    public func head(account: String) throws(ServerError) -> Int {
        do {
            return try database.scalarInt("SELECT head FROM accounts WHERE id = ?", account) ?? 0
        } catch {
            throw ServerError.wrap(error)
        }
    }

    /// The draft as the server holds it now, tombstones included.
    public func draft(account: String, id: String) throws(ServerError) -> DraftState? {
        do {
            return try currentDraft(account: account, id: id)
        } catch {
            throw ServerError.wrap(error)
        }
    }

    func currentDraft(account: String, id: String) throws -> DraftState? {
        try database.first(
            "SELECT title, body, version, last_writer, deleted FROM drafts WHERE account = ? AND id = ?", account, id
        ) { row in
            DraftState(title: row.string(0), body: row.string(1), version: row.int(2), lastWriter: row.string(3),
                       deleted: row.bool(4))
        }
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws(ServerError) -> String {
        do {
            return try database.integrityCheck()
        } catch {
            throw ServerError.wrap(error)
        }
    }
}
