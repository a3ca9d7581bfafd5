import SQLite
import SyncProtocol

extension ServerStore {
    /// Applies a batch of ops from `device` of `account`, in order, in ONE transaction: each op, its change and its
    /// idempotency record commit together or not at all, and nothing is answered before the commit.
    ///
    /// A known key returns its original result and changes nothing. `injectRejections` holds the indices of ops
    /// the fault plan refuses; only ops the server has not seen are refused, so an applied op is never reported
    /// as rejected.
    ///
    /// The design switches: `idempotency: false` applies a known key again (its first record is kept);
    /// `beforeCommit` runs after the ops are decided and before the commit (what `noticeBeforeCommit` and
    /// `replyBeforeCommit` send); `failCommit` makes the commit fail after that (the fault plan), rolling everything
    /// back. `decided` receives the outcomes as soon as they are known, so a caller can tell what a failed commit lost.
    public func apply(device: String, account: String, ops: [Op], injectRejections: Set<Int> = [],
                      idempotency: Bool = true, failCommit: Bool = false,
                      beforeCommit: (([AppliedOp]) -> Void)? = nil, decided: (([AppliedOp]) -> Void)? = nil)
        throws(ServerError) -> [AppliedOp]
    {
        // The account's changes and head may move: the pages read before are no longer what a read gives.
        pageCache.invalidate(account: account)
        defer { pageCache.invalidate(account: account) }
        do {
            return try database.transaction {
                let outcomes = try applyInTransaction(device, account, ops, injectRejections, idempotency)
                decided?(outcomes)
                beforeCommit?(outcomes)
                if failCommit { throw ServerError.database("commit failed (injected: failCommit)", busy: false) }
                return outcomes
            }
        } catch {
            throw ServerError.wrap(error)
        }
    }

    /// What `applied_ops` remembers of a key.
    private struct KeyRecord {
        var device: String
        var outcome: Outcome
        var seq: Int?
        var version: Int?
        var conflict: Bool?
        var reason: String?
    }

    /// Decides the whole batch in memory from one read of its keys and drafts, then writes it with multi-row
    /// statements: a batch of 100 costs a handful of statements instead of five per op (the bench target is
    /// 50,000 ops/s in batches of 100). The decisions are the same as applying the ops one by one in order.
    private func applyInTransaction(_ device: String, _ account: String, _ ops: [Op], _ injectRejections: Set<Int>,
                                    _ idempotency: Bool) throws -> [AppliedOp]
    {
        var head: Int
        if let known = try database.scalarInt("SELECT head FROM accounts WHERE id = ?", account) {
            head = known
        } else {
            try database.run("INSERT INTO accounts (id, head) VALUES (?, 0)", account)
            head = 0
        }
        let startHead = head
        let known = try knownKeys(account: account, Array(Set(ops.map(\.key))))
        // `idempotency: false`: no key is looked up, so a resend is applied again; only its first record is kept.
        var keys = idempotency ? known : [:]
        var recorded = Set(known.keys)
        var drafts = try currentDrafts(account: account, ids: Array(Set(ops.map(\.draft))))
        var written: [String] = []  // drafts to write, in first-write order
        var writtenSet: Set<String> = []
        // Row values laid end to end, ready to bind: one array per table rather than one per row.
        var changeRows: [SQLValue] = []
        var keyRows: [SQLValue] = []
        changeRows.reserveCapacity(ops.count * 10)
        keyRows.reserveCapacity(ops.count * 8)
        var outcomes: [AppliedOp] = []
        outcomes.reserveCapacity(ops.count)

        func remember(_ key: String, _ record: KeyRecord) {
            if idempotency { keys[key] = record }
            guard recorded.insert(key).inserted else { return }
            keyRows.append(.text(key))
            keyRows.append(.text(device))
            keyRows.append(.text(account))
            keyRows.append(.text(record.outcome.rawValue))
            keyRows.append(record.seq.sqlValue)
            keyRows.append(record.version.sqlValue)
            keyRows.append(record.conflict.sqlValue)
            keyRows.append(record.reason.sqlValue)
        }

        for (index, op) in ops.enumerated() {
            if let record = keys[op.key] {
                outcomes.append(replay(op.key, record, device: device))
                continue
            }
            if injectRejections.contains(index) {
                remember(op.key, KeyRecord(device: device, outcome: .rejected, reason: ServerFaults.injectedReason))
                outcomes.append(AppliedOp(result: OpResult(key: op.key, outcome: .rejected,
                                                           reason: ServerFaults.injectedReason)))
                continue
            }
            switch ConflictPolicy.resolve(op, current: drafts[op.draft], device: device) {
            case .reject(let reason):
                remember(op.key, KeyRecord(device: device, outcome: .rejected, reason: reason))
                outcomes.append(AppliedOp(result: OpResult(key: op.key, outcome: .rejected, reason: reason)))
            case .write(let state, let action, let conflict):
                head += 1
                let change = Change(
                    seq: head, draft: op.draft, action: action, version: state.version,
                    title: state.deleted ? nil : state.title, body: state.deleted ? nil : state.body,
                    origin: device, key: op.key, conflict: conflict
                )
                if writtenSet.insert(op.draft).inserted { written.append(op.draft) }
                drafts[op.draft] = state
                changeRows.append(.text(account))
                changeRows.append(change.seq.sqlValue)
                changeRows.append(.text(change.draft))
                changeRows.append(.text(change.action.rawValue))
                changeRows.append(change.version.sqlValue)
                changeRows.append(change.title.sqlValue)
                changeRows.append(change.body.sqlValue)
                changeRows.append(.text(change.origin))
                changeRows.append(.text(change.key))
                changeRows.append(change.conflict.sqlValue)
                let recordedFresh = !recorded.contains(op.key)
                remember(op.key, KeyRecord(device: device, outcome: .applied, seq: head, version: state.version,
                                           conflict: conflict))
                let result = OpResult(key: op.key, outcome: .applied, seq: head, version: state.version,
                                      conflict: conflict)
                // `idempotency: false` and a key already applied: this is the resend, applied again.
                outcomes.append(AppliedOp(result: result, change: change, reapplied: !idempotency && !recordedFresh))
            }
        }

        try insert(.changes, values: changeRows)
        try insert(.appliedOps, values: keyRows)
        // Only each draft's last state in the batch is written: the changes hold every step.
        var draftRows: [SQLValue] = []
        draftRows.reserveCapacity(written.count * 7)
        for id in written {
            guard let state = drafts[id] else { continue }
            draftRows.append(.text(account))
            draftRows.append(.text(id))
            draftRows.append(.text(state.title))
            draftRows.append(.text(state.body))
            draftRows.append(state.version.sqlValue)
            draftRows.append(.text(state.lastWriter))
            draftRows.append(state.deleted.sqlValue)
        }
        try insert(.drafts, values: draftRows)
        if head != startHead {
            try database.run("UPDATE accounts SET head = ? WHERE id = ?", head, account)
        }
        return outcomes
    }

    /// The original result of a known key. A key another device used is refused (and not recorded), so one device
    /// cannot read or spoil another's outcome.
    private func replay(_ key: String, _ record: KeyRecord, device: String) -> AppliedOp {
        guard record.device == device else {
            let result = OpResult(key: key, outcome: .rejected, reason: "key \"\(key)\" was used by another device")
            return AppliedOp(result: result, replay: true)
        }
        if record.outcome == .applied {
            return AppliedOp(result: OpResult(key: key, outcome: .duplicate, seq: record.seq, version: record.version,
                                              conflict: record.conflict), replay: true)
        }
        return AppliedOp(result: OpResult(key: key, outcome: .rejected, reason: record.reason), replay: true)
    }

    private func knownKeys(account: String, _ keys: [String]) throws -> [String: KeyRecord] {
        var records: [String: KeyRecord] = [:]
        records.reserveCapacity(keys.count)
        for chunk in Self.chunks(keys) {
            let sql = BatchSelect.knownKeys.sql(count: chunk.count)
            try database.forEach(sql, values: [.text(account)] + chunk.map { .text($0) }) { row in
                records[row.string(0)] = KeyRecord(
                    device: row.string(1), outcome: Outcome(rawValue: row.string(2)) ?? .rejected,
                    seq: row.optionalInt(3), version: row.optionalInt(4),
                    conflict: row.optionalInt(5).map { $0 != 0 }, reason: row.optionalString(6)
                )
            }
        }
        return records
    }

    private func currentDrafts(account: String, ids: [String]) throws -> [String: DraftState] {
        var drafts: [String: DraftState] = [:]
        for chunk in Self.chunks(ids) {
            let sql = BatchSelect.drafts.sql(count: chunk.count)
            try database.forEach(sql, values: [.text(account)] + chunk.map { .text($0) }) { row in
                drafts[row.string(0)] = DraftState(title: row.string(1), body: row.string(2), version: row.int(3),
                                                   lastWriter: row.string(4), deleted: row.bool(5))
            }
        }
        return drafts
    }

    /// Inserts rows (their values laid end to end) with multi-row statements, chunked so few statements serve
    /// every batch size.
    private func insert(_ table: BatchInsert, values: [SQLValue]) throws {
        let columns = table.columns
        var start = 0
        for size in Self.chunkSizes(values.count / columns) {
            try database.run(table.sql(rows: size), values: Array(values[start..<start + size * columns]))
            start += size * columns
        }
    }

    /// Splits `items` into chunks whose sizes are powers of two up to 64, so a handful of prepared statements
    /// (cached by their SQL) serve every batch size.
    static func chunks<T>(_ items: [T]) -> [[T]] {
        var out: [[T]] = []
        var start = 0
        for size in chunkSizes(items.count) {
            out.append(Array(items[start..<start + size]))
            start += size
        }
        return out
    }

    static func chunkSizes(_ count: Int) -> [Int] {
        var sizes: [Int] = []
        var left = count
        var size = 64
        while left > 0 {
            while size > left { size /= 2 }
            sizes.append(size)
            left -= size
        }
        return sizes
    }

    /// The SQL `make` writes for each statement of a batch and each chunk size `chunkSizes` can produce (1, 2, 4 …
    /// 64), built once so a chunk's statement is a lookup.
    static func sqlByChunkSize<Statement: CaseIterable & Hashable>(
        _ make: (Statement, _ size: Int) -> String
    ) -> [Statement: [Int: String]] {
        var all: [Statement: [Int: String]] = [:]
        for statement in Statement.allCases {
            var bySize: [Int: String] = [:]
            var size = 1
            while size <= 64 {
                bySize[size] = make(statement, size)
                size *= 2
            }
            all[statement] = bySize
        }
        return all
    }

    /// `(?, ?), (?, ?)` for rows × columns; one row of n columns is the `(?, …)` of an IN list.
    static func placeholders(rows: Int, columns: Int) -> String {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        return Array(repeating: row, count: rows).joined(separator: ", ")
    }
}
