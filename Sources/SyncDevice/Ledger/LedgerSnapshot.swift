import SQLite
import SyncProtocol

/// A device's durable state as the lab's checks read it: typed rows of the `Ledger`'s tables (ops, replica, shadow,
/// cursor, opens), read in one read transaction. Lives beside `Ledger` so a schema change is made in one module.
public struct LedgerSnapshot: Sendable {
    /// One op of the ledger.
    public struct OpRow: Sendable, Equatable {
        public var key: String
        public var localSeq: Int
        public var draft: String
        public var action: DraftAction
        public var status: OpStatus
        public var attempts: Int
        public var lastError: String?
        public var resultSeq: Int?
        public var savedWall: Int64
        public var completedWall: Int64?
    }

    /// One app open and the age of the data it showed (nil: never synced).
    public struct OpenRow: Sendable, Equatable {
        public var sim: Double
        public var dataAgeSec: Double?
    }

    public var ops: [OpRow] = []
    /// The replica the user sees (tombstones included).
    public var replica: [DraftRow] = []
    /// The server's state as this device last pulled it: the replay of the server's changes up to `cursor`.
    public var shadow: [DraftRow] = []
    public var cursor = 0
    /// The install id (new after a reinstall), nil if no device ever ran with the file.
    public var install: String?
    public var opens: [OpenRow] = []

    public init() {}

    public static func read(path: String) throws -> LedgerSnapshot {
        let database = try Database(path: path, synchronous: .normal)
        var snapshot = LedgerSnapshot()
        try database.execute("BEGIN")
        defer { try? database.execute("COMMIT") }
        try database.forEach("""
            SELECT key, local_seq, draft, action, status, attempts, last_error, result_seq, saved_wall, completed_wall
            FROM ops ORDER BY local_seq
            """) { row in
            snapshot.ops.append(OpRow(
                key: row.string(0), localSeq: row.int(1), draft: row.string(2),
                action: DraftAction(rawValue: row.string(3)) ?? .update,
                status: OpStatus(rawValue: row.string(4)) ?? .savedOnDevice, attempts: row.int(5),
                lastError: row.optionalString(6), resultSeq: row.optionalInt(7), savedWall: Int64(row.int(8)),
                completedWall: row.optionalInt(9).map(Int64.init)))
        }
        func drafts(_ table: String) throws -> [DraftRow] {
            try database.query("SELECT id, title, body, version, deleted FROM \(table) ORDER BY id") {
                DraftRow(id: $0.string(0), title: $0.optionalString(1), body: $0.optionalString(2), version: $0.int(3),
                         deleted: $0.bool(4))
            }
        }
        snapshot.replica = try drafts("drafts")
        snapshot.shadow = try drafts("shadow")
        snapshot.cursor = try database.first("SELECT value FROM state WHERE key = 'cursor'") { $0.int(0) } ?? 0
        snapshot.install = try database.first("SELECT value FROM state WHERE key = 'install'") { $0.optionalString(0) }
            ?? nil
        snapshot.opens = try database.query("SELECT sim, data_age_sec FROM opens ORDER BY sim") {
            OpenRow(sim: $0.double(0), dataAgeSec: $0.isNull(1) ? nil : $0.double(1))
        }
        return snapshot
    }
}
