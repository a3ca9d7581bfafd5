/// The `IN (…)` reads of a batch, their SQL built once per chunk size.
enum BatchSelect: CaseIterable {
    case knownKeys, drafts

    private var prefix: String {
        switch self {
        case .knownKeys:
            // Keys are scoped by account: one account's keys neither collide with nor reveal another's.
            return "SELECT key, device, outcome, seq, version, conflict, reason FROM applied_ops "
                + "WHERE account = ? AND key IN "
        case .drafts:
            return "SELECT id, title, body, version, last_writer, deleted FROM drafts WHERE account = ? AND id IN "
        }
    }

    /// SQL for each chunk size `ServerStore.chunkSizes` can produce (1, 2, 4 … 64 values).
    private static let statements = ServerStore.sqlByChunkSize { (select: BatchSelect, count) in
        select.making(count: count)
    }

    func sql(count: Int) -> String {
        Self.statements[self]?[count] ?? making(count: count)
    }

    private func making(count: Int) -> String {
        prefix + ServerStore.placeholders(rows: 1, columns: count)
    }
}
