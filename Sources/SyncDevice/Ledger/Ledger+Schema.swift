import SQLite

/// The ledger's schema: the steps an existing file goes through (`migrations`, in order, each once) and the schema they
/// end at, made at once in a new file (`schema`). Both are built from the same table definitions below, so a column
/// is written once; `LedgerSchemaTests` hold the two results equal.
extension Ledger {
    static let migrations = [
        Migration(version: 1, sql: """
            CREATE TABLE ops(\(opsColumns));
            \(opsIndexes)
            \(draftTable("drafts", rowid: true))
            \(draftTable("shadow", rowid: true))
            \(stateTable("state", rowid: true))
            \(passesAndOpens)
            \(initialState)
            """),
        // `keyPerAttempt`: the key the last attempt was sent with, when it is not the op's own.
        Migration(version: 2, sql: "ALTER TABLE ops ADD COLUMN wire_key TEXT;"),
        // Settling a pulled change finds its op by the key it was sent with: by `key`, or by this index.
        Migration(version: 3, sql: wireKeyIndex),
        // A receiving pass writes a row of `shadow`, `drafts` and `state`, each keyed by text: as WITHOUT ROWID tables
        // each is one B-tree instead of a table and its key's index (fewer pages found and written a pass;
        // docs/PERFORMANCE.md). A row with no key could never be read by its key; it is not carried over.
        Migration(version: 4, sql: ["shadow", "drafts"].map { table in """
            \(draftTable("\(table)_v4", rowid: false))
            INSERT INTO \(table)_v4(id, title, body, version, deleted)
                SELECT id, title, body, version, deleted FROM \(table) WHERE id IS NOT NULL;
            DROP TABLE \(table);
            ALTER TABLE \(table)_v4 RENAME TO \(table);
            """ }.joined(separator: "\n") + """

            \(stateTable("state_v4", rowid: false))
            INSERT INTO state_v4(key, value) SELECT key, value FROM state WHERE key IS NOT NULL;
            DROP TABLE state;
            ALTER TABLE state_v4 RENAME TO state;
            """),
    ]

    /// The schema `migrations` end at, made at once in a new file (`Database.migrate(_:fresh:)`): a new ledger does
    /// not replay the steps an old file needed (schema 4's rebuild of three tables cost a new ledger ≈ 5.7 M
    /// instructions).
    static let schema = Migration(version: 4, sql: """
        CREATE TABLE ops(\(opsColumns),
            wire_key TEXT);
        \(opsIndexes)
        \(wireKeyIndex)
        \(draftTable("drafts", rowid: false))
        \(draftTable("shadow", rowid: false))
        \(stateTable("state", rowid: false))
        \(passesAndOpens)
        \(initialState)
        """)

    /// `ops`' columns as schema 1 made them (schema 2 adds `wire_key` after them).
    private static let opsColumns = """

            key TEXT PRIMARY KEY,
            local_seq INTEGER NOT NULL UNIQUE,
            draft TEXT NOT NULL,
            action TEXT NOT NULL,
            base INTEGER NOT NULL,
            title TEXT,
            body TEXT,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_sim REAL NOT NULL DEFAULT 0,
            lease_owner TEXT,
            lease_expires_sim REAL,
            last_error TEXT,
            result_seq INTEGER,
            saved_wall INTEGER NOT NULL,
            completed_wall INTEGER
        """

    private static let opsIndexes = """
        CREATE INDEX ops_unsettled ON ops(local_seq) WHERE status NOT IN ('completed', 'needsAttention');
        CREATE INDEX ops_draft ON ops(draft, local_seq);
        """

    private static let wireKeyIndex = "CREATE INDEX ops_wire_key ON ops(wire_key) WHERE wire_key IS NOT NULL;"

    /// A table of drafts (`drafts`, the replica; `shadow`, the server's state) named `name`.
    private static func draftTable(_ name: String, rowid: Bool) -> String {
        """
        CREATE TABLE \(name)(id TEXT PRIMARY KEY, title TEXT, body TEXT, version INTEGER NOT NULL,
                             deleted INTEGER NOT NULL DEFAULT 0)\(rowid ? "" : " WITHOUT ROWID");
        """
    }

    private static func stateTable(_ name: String, rowid: Bool) -> String {
        "CREATE TABLE \(name)(key TEXT PRIMARY KEY, value)\(rowid ? "" : " WITHOUT ROWID");"
    }

    private static let passesAndOpens = """
        CREATE TABLE passes(id INTEGER PRIMARY KEY, trigger TEXT NOT NULL, started_sim REAL NOT NULL,
                            ended_sim REAL, outcome TEXT, sent INTEGER NOT NULL DEFAULT 0,
                            pulled INTEGER NOT NULL DEFAULT 0, cut_off INTEGER NOT NULL DEFAULT 0,
                            success INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE opens(sim REAL NOT NULL, data_age_sec REAL);
        """

    private static let initialState = """
        INSERT INTO state(key, value) VALUES ('cursor', 0), ('head', 0), ('unknown_outcomes', 0);
        """
}
