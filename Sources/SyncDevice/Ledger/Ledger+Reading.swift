import SQLite
import SyncProtocol

/// What the ledger holds, read: op counts by status, the replica, one op (Ledger.swift writes them).
extension Ledger {
    /// How many ops are in each status.
    public func counts() throws -> [OpStatus: Int] {
        var counts: [OpStatus: Int] = [:]
        for status in OpStatus.allCases { counts[status] = 0 }
        try database.forEach("SELECT status, count(*) FROM ops GROUP BY status", []) { row in
            if let status = OpStatus(rawValue: row.string(0)) { counts[status] = row.int(1) }
        }
        return counts
    }

    /// The replica: every draft this device holds.
    public func drafts() throws -> [DraftRow] {
        try database.query("SELECT id, title, body, version, deleted FROM drafts ORDER BY id") {
            DraftRow(id: $0.string(0), title: $0.optionalString(1), body: $0.optionalString(2), version: $0.int(3),
                     deleted: $0.bool(4))
        }
    }

    /// One op as stored.
    public func op(_ key: String) throws -> StoredOp? {
        try database.first("""
            SELECT key, status, attempts, next_attempt_sim, lease_owner, lease_expires_sim, last_error, result_seq
            FROM ops WHERE key = ?
            """, key) {
            StoredOp(key: $0.string(0), status: OpStatus(rawValue: $0.string(1)) ?? .savedOnDevice,
                     attempts: $0.int(2), nextAttemptSim: $0.double(3), leaseOwner: $0.optionalString(4),
                     leaseExpiresSim: $0.isNull(5) ? nil : $0.double(5), lastError: $0.optionalString(6),
                     resultSeq: $0.optionalInt(7))
        }
    }
}
