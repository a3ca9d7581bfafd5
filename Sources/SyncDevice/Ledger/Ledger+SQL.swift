import SQLite
import SyncProtocol

/// The ledger's statements whose query plans matter: `LedgerTests` holds each one's plan.
extension Ledger {
    /// Settles the op a pulled change came from (result seq, wall µs, the change's key twice). The key is the one the
    /// op was sent with: its `wire_key` when it has one, else its own. Written as an OR, not `coalesce(wire_key, key)`,
    /// so SQLite finds the row by the primary key or `ops_wire_key` instead of scanning every op (a device that saved
    /// thousands of edits paid that scan for each change it pulled).
    static let settleSQL = """
        UPDATE ops SET status = 'completed', result_seq = ?, completed_wall = ?, lease_owner = NULL,
            lease_expires_sim = NULL, last_error = NULL
        WHERE ((wire_key IS NULL AND key = ?) OR wire_key = ?) AND status != 'completed'
        """

    /// A claim's first two statements: ops whose lease ran out go back to be sent again; ops claimed with no lease
    /// (`leases` off) are counted as stranded. `status NOT IN (…)` says what `status = 'sending'` implies, in the
    /// words of `ops_unsettled`'s condition, so SQLite walks that index (the few unsettled ops) instead of the table.
    static let reclaimSQL = """
        UPDATE ops SET status = 'confirmationDelayed', lease_owner = NULL, lease_expires_sim = NULL,
            last_error = 'lease expired: the pass that held it was cut off or killed'
        WHERE status NOT IN ('completed', 'needsAttention') AND status = 'sending' AND lease_expires_sim <= ?
        """
    static let strandedSQL = """
        SELECT count(*) FROM ops
        WHERE status NOT IN ('completed', 'needsAttention') AND status = 'sending' AND lease_expires_sim IS NULL
        """

    /// Writes a pulled change onto its draft's shadow row and returns the row as it now is (`ShadowRow`): draft,
    /// title, body, version bound as ?1…?4 for every action (a delete leaves ?2 and ?3 unread). A create sets the
    /// whole draft, also over a deleted one with the same id; an update keeps the fields it does not carry.
    static func shadowSQL(_ action: DraftAction) -> String {
        switch action {
        case .create: shadowCreateReturningSQL
        case .update: shadowUpdateReturningSQL
        case .delete: shadowDeleteReturningSQL
        }
    }

    /// The same write, returning nothing (a ledger with no op: `copyShadowSQL` then makes the replica row).
    static func shadowWriteSQL(_ action: DraftAction) -> String {
        switch action {
        case .create: shadowCreateSQL
        case .update: shadowUpdateSQL
        case .delete: shadowDeleteSQL
        }
    }

    private static let shadowCreateSQL = """
        INSERT INTO shadow(id, title, body, version, deleted) VALUES (?1, ?2, ?3, ?4, 0)
        ON CONFLICT(id) DO UPDATE SET title = excluded.title, body = excluded.body, version = excluded.version,
            deleted = 0
        """
    private static let shadowUpdateSQL = """
        INSERT INTO shadow(id, title, body, version, deleted) VALUES (?1, ?2, ?3, ?4, 0)
        ON CONFLICT(id) DO UPDATE SET title = coalesce(excluded.title, shadow.title),
            body = coalesce(excluded.body, shadow.body), version = excluded.version, deleted = 0
        """
    private static let shadowDeleteSQL = """
        INSERT INTO shadow(id, title, body, version, deleted) VALUES (?1, NULL, NULL, ?4, 1)
        ON CONFLICT(id) DO UPDATE SET version = excluded.version, deleted = 1
        """
    private static let returning = "\nRETURNING title, body, version, deleted"
    private static let shadowCreateReturningSQL = shadowCreateSQL + returning
    private static let shadowUpdateReturningSQL = shadowUpdateSQL + returning
    private static let shadowDeleteReturningSQL = shadowDeleteSQL + returning

    /// A ledger with no op: the replica's row of draft ?1 is its shadow row as it is (a rebuild with nothing to
    /// replay), copied within SQLite.
    static let copyShadowSQL = """
        INSERT INTO drafts(id, title, body, version, deleted) SELECT id, title, body, version, deleted FROM shadow
            WHERE id = ?1
        ON CONFLICT(id) DO UPDATE SET title = excluded.title, body = excluded.body, version = excluded.version,
            deleted = excluded.deleted
        """

    /// The ops `rebuild(draft:)` replays on the shadow, in the order they were saved (draft, then the shadow's seq):
    /// the draft's unsettled ops and those completed above the shadow. Through `ops_draft`, so it reads every op the
    /// draft ever had: two partial indexes that would read only those two kinds were measured and not kept, since
    /// they cost more WAL frames per op than they saved (docs/PERFORMANCE.md, "tried and not kept").
    static let rebuildSQL = """
        SELECT action, title, body, status, key FROM ops WHERE draft = ? AND (status NOT IN ('completed',
            'needsAttention') OR (status = 'completed' AND result_seq > ?))
        ORDER BY local_seq
        """
}

/// The `state` rows a pass moves, each group in one statement (a statement a row cost a receiving pass three more).
extension Ledger {
    /// What an upsert of `state` rows does to a row that exists: the head is never lowered, any other key is set.
    private static let stateUpsert = """
        ON CONFLICT(key) DO UPDATE
            SET value = CASE key WHEN 'head' THEN max(value, excluded.value) ELSE excluded.value END
        """

    /// A page's end: the cursor, and the head (never lowered).
    static let cursorSQL = "INSERT INTO state(key, value) VALUES ('cursor', ?), ('head', ?) " + stateUpsert

    /// A pass's end: the head, the next desired run.
    static let endSQL = "INSERT INTO state(key, value) VALUES ('head', ?), ('next_desired_sim', ?) " + stateUpsert

    /// A successful pass's end: the head, the next desired run and the sync time.
    static let endSuccessSQL = "INSERT INTO state(key, value) VALUES ('head', ?), ('next_desired_sim', ?), "
        + "('last_sync_sim', ?) " + stateUpsert
}

/// A draft's row in `shadow` (the server's state) or `drafts` (the replica): what a rebuild replays ops onto.
struct ShadowRow {
    var title: String?
    var body: String?
    var version: Int
    var deleted: Bool

    init(title: String?, body: String?, version: Int, deleted: Bool) {
        self.title = title
        self.body = body
        self.version = version
        self.deleted = deleted
    }

    /// The columns title, body, version, deleted of `row`, in that order.
    init(_ row: Row) {
        self.init(title: row.optionalString(0), body: row.optionalString(1), version: row.int(2), deleted: row.bool(3))
    }
}
