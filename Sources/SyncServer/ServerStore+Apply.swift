import SQLite
import SyncProtocol

extension ServerStore {
    /// Applies a batch of ops from `device` of `account`, in order, in ONE transaction: each op, its change and its
    /// idempotency record commit together or not at all, and nothing is answered before the commit.
    ///
    /// A known key returns its original result and changes nothing. `injectRejections` holds the indices of ops
    /// the fault plan refuses; only ops the server has not seen are refused, so an applied op is never reported
    /// as rejected.
    public func apply(device: String, account: String, ops: [Op], injectRejections: Set<Int> = [])
        throws(ServerError) -> [AppliedOp]
    {
        do {
            return try database.transaction { try applyInTransaction(device, account, ops, injectRejections) }
        } catch {
            throw ServerError.wrap(error)
        }
    }

    private func applyInTransaction(_ device: String, _ account: String, _ ops: [Op], _ injectRejections: Set<Int>)
        throws -> [AppliedOp]
    {
        var head: Int
        if let known = try database.scalarInt("SELECT head FROM accounts WHERE id = ?", account) {
            head = known
        } else {
            try database.run("INSERT INTO accounts (id, head) VALUES (?, 0)", account)
            head = 0
        }
        let startHead = head
        var outcomes: [AppliedOp] = []
        outcomes.reserveCapacity(ops.count)
        for (index, op) in ops.enumerated() {
            if let replay = try replayed(op.key, device: device) {
                outcomes.append(replay)
                continue
            }
            if injectRejections.contains(index) {
                try record(op.key, device, account, .rejected, reason: ServerFaults.injectedReason)
                outcomes.append(AppliedOp(result: OpResult(key: op.key, outcome: .rejected,
                                                           reason: ServerFaults.injectedReason)))
                continue
            }
            let current = try currentDraft(account: account, id: op.draft)
            switch ConflictPolicy.resolve(op, current: current, device: device) {
            case .reject(let reason):
                try record(op.key, device, account, .rejected, reason: reason)
                outcomes.append(AppliedOp(result: OpResult(key: op.key, outcome: .rejected, reason: reason)))
            case .write(let state, let action, let conflict):
                head += 1
                let change = Change(
                    seq: head, draft: op.draft, action: action, version: state.version,
                    title: state.deleted ? nil : state.title, body: state.deleted ? nil : state.body,
                    origin: device, key: op.key, conflict: conflict
                )
                try write(state, account: account, draft: op.draft)
                try database.run(
                    """
                    INSERT INTO changes (account, seq, draft, action, version, title, body, origin, op_key, conflict)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    account, change.seq, change.draft, change.action.rawValue, change.version, change.title,
                    change.body, change.origin, change.key, change.conflict
                )
                try record(op.key, device, account, .applied, seq: head, version: state.version, conflict: conflict)
                let result = OpResult(key: op.key, outcome: .applied, seq: head, version: state.version,
                                      conflict: conflict)
                outcomes.append(AppliedOp(result: result, change: change))
            }
        }
        if head != startHead {
            try database.run("UPDATE accounts SET head = ? WHERE id = ?", head, account)
        }
        return outcomes
    }

    /// The original result of a known key, or nil for a new one. A key another device used is refused (and not
    /// recorded), so one device cannot read or spoil another's outcome.
    private func replayed(_ key: String, device: String) throws -> AppliedOp? {
        let row = try database.first(
            "SELECT device, outcome, seq, version, conflict, reason FROM applied_ops WHERE key = ?", key
        ) { row in
            (device: row.string(0), outcome: row.string(1), seq: row.optionalInt(2), version: row.optionalInt(3),
             conflict: row.optionalInt(4).map { $0 != 0 }, reason: row.optionalString(5))
        }
        guard let row else { return nil }
        guard row.device == device else {
            let result = OpResult(key: key, outcome: .rejected, reason: "key \"\(key)\" was used by another device")
            return AppliedOp(result: result, replay: true)
        }
        if row.outcome == Outcome.applied.rawValue {
            return AppliedOp(result: OpResult(key: key, outcome: .duplicate, seq: row.seq, version: row.version,
                                              conflict: row.conflict), replay: true)
        }
        return AppliedOp(result: OpResult(key: key, outcome: .rejected, reason: row.reason), replay: true)
    }

    private func record(_ key: String, _ device: String, _ account: String, _ outcome: Outcome, seq: Int? = nil,
                        version: Int? = nil, conflict: Bool? = nil, reason: String? = nil) throws
    {
        try database.run(
            """
            INSERT INTO applied_ops (key, device, account, outcome, seq, version, conflict, reason)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            key, device, account, outcome.rawValue, seq, version, conflict, reason
        )
    }

    private func write(_ state: DraftState, account: String, draft: String) throws {
        try database.run(
            """
            INSERT INTO drafts (account, id, title, body, version, last_writer, deleted) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (account, id) DO UPDATE SET title = excluded.title, body = excluded.body,
                version = excluded.version, last_writer = excluded.last_writer, deleted = excluded.deleted
            """,
            account, draft, state.title, state.body, state.version, state.lastWriter, state.deleted
        )
    }
}
