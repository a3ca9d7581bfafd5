/// The multi-row INSERTs of a batch, their SQL built once per chunk size.
enum BatchInsert: CaseIterable {
    case changes, appliedOps, drafts

    var columns: Int {
        switch self {
        case .changes: return 10
        case .appliedOps: return 8
        case .drafts: return 7
        }
    }

    private var prefix: String {
        switch self {
        case .changes:
            return "INSERT INTO changes (account, seq, draft, action, version, title, body, origin, op_key, conflict)"
        case .appliedOps:
            return "INSERT INTO applied_ops (key, device, account, outcome, seq, version, conflict, reason)"
        case .drafts:
            return "INSERT INTO drafts (account, id, title, body, version, last_writer, deleted)"
        }
    }

    private var suffix: String {
        switch self {
        case .changes, .appliedOps: return ""
        case .drafts:
            return """
                ON CONFLICT (account, id) DO UPDATE SET title = excluded.title, body = excluded.body,
                version = excluded.version, last_writer = excluded.last_writer, deleted = excluded.deleted
                """
        }
    }

    /// SQL for each chunk size `ServerStore.chunkSizes` can produce (1, 2, 4 … 64 rows).
    private static let statements = ServerStore.sqlByChunkSize { (table: BatchInsert, rows) in
        table.making(rows: rows)
    }

    func sql(rows: Int) -> String {
        Self.statements[self]?[rows] ?? making(rows: rows)
    }

    private func making(rows: Int) -> String {
        prefix + " VALUES " + ServerStore.placeholders(rows: rows, columns: columns) + " " + suffix
    }
}
