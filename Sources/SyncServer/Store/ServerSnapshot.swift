import SQLite
import SyncProtocol

/// The server's durable state as the lab's checks read it after (or during) a run: typed rows of `ServerStore`'s
/// tables, read in one read transaction so the tables agree with each other. Lives beside `ServerStore` so a schema
/// change is made in one module; the launcher reads no SQL of its own.
public struct ServerSnapshot: Sendable {
    /// One row of the per-account change log: the change as a page carries it, and its account (`row.seq` reads
    /// the change's own field).
    @dynamicMemberLookup
    public struct ChangeRow: Sendable, Equatable {
        public var account: String
        public var change: Change

        public subscript<Field>(dynamicMember field: WritableKeyPath<Change, Field>) -> Field {
            get { change[keyPath: field] }
            set { change[keyPath: field] = newValue }
        }
    }

    /// A draft as the server holds it (tombstones included).
    public struct DraftState: Sendable, Equatable {
        public var account: String
        public var id: String
        public var title: String
        public var body: String
        public var version: Int
        public var deleted: Bool
    }

    /// An idempotency record: what the server decided for a key, once.
    public struct KeyRow: Sendable, Equatable {
        public var key: String
        public var device: String
        public var account: String
        public var outcome: Outcome
        public var seq: Int?
        public var reason: String?
    }

    /// Changes by account, in seq order.
    public var changes: [String: [ChangeRow]] = [:]
    /// Drafts by account, in id order.
    public var drafts: [String: [DraftState]] = [:]
    /// The head each account's row records.
    public var heads: [String: Int] = [:]
    /// Idempotency records by key.
    public var keys: [String: KeyRow] = [:]
    /// Device id → account, as registered.
    public var deviceAccounts: [String: String] = [:]

    public init() {}

    /// Reads the file at `path` (which the server may still be writing: WAL readers see one committed state).
    public static func read(path: String) throws -> ServerSnapshot {
        let database = try Database(path: path, synchronous: .normal)
        var snapshot = ServerSnapshot()
        try database.execute("BEGIN")
        defer { try? database.execute("COMMIT") }
        try database.forEach("""
            SELECT account, seq, draft, action, version, title, body, origin, op_key, conflict FROM changes
            ORDER BY account, seq
            """) { row in
            snapshot.changes[row.string(0), default: []].append(ChangeRow(account: row.string(0), change: Change(
                seq: row.int(1), draft: row.string(2),
                action: DraftAction(rawValue: row.string(3)) ?? .update, version: row.int(4),
                title: row.optionalString(5), body: row.optionalString(6), origin: row.string(7), key: row.string(8),
                conflict: row.bool(9))))
        }
        try database.forEach("SELECT account, id, title, body, version, deleted FROM drafts ORDER BY account, "
            + "id") { row in
            snapshot.drafts[row.string(0), default: []].append(DraftState(
                account: row.string(0), id: row.string(1), title: row.string(2), body: row.string(3),
                version: row.int(4), deleted: row.bool(5)))
        }
        try database.forEach("SELECT id, head FROM accounts") { snapshot.heads[$0.string(0)] = $0.int(1) }
        try database.forEach("SELECT key, device, account, outcome, seq, reason FROM applied_ops") { row in
            snapshot.keys[row.string(0)] = KeyRow(
                key: row.string(0), device: row.string(1), account: row.string(2),
                outcome: Outcome(rawValue: row.string(3)) ?? .rejected, seq: row.optionalInt(4),
                reason: row.optionalString(5))
        }
        try database.forEach("SELECT id, account FROM devices") { snapshot.deviceAccounts[$0.string(0)] = $0.string(1) }
        return snapshot
    }

    /// The account's head: its last change's seq.
    public func head(_ account: String) -> Int { changes[account]?.last?.seq ?? 0 }
}
