import Foundation
import LabKit
import SQLite
import SyncProtocol

/// The device's durable state in one SQLite file: the operation ledger (`ops`), the replica (`drafts`, rebuilt from
/// the server's state in `shadow` plus the pending ops), the cursor (`state`), the pass history (`passes`) and the
/// data age at each app open (`opens`). Every method that changes anything is one transaction, so a SIGKILL at any
/// line leaves either all of a step or none of it.
public final class Ledger {
    public let database: Database
    public var path: String { database.path }
    /// Owner prefix of the leases this process takes: a restarted process never mistakes an old lease for its own.
    public let leaseOwner: String
    /// `ownWrites: keep` (set by `prepare`): a draft's rebuild also replays the acknowledged ops the cursor has not
    /// reached, so the user reads their own writes while the page holding them is still to come.
    public var keepsOwnWrites = true
    /// The acknowledged ops the last step's rebuilds left out of the replica (`ownWrites: untilPulled` only), for the
    /// driver's `replica.ownWriteHidden` event. Emptied by the driver.
    public var hiddenOwnWrites: [(draft: String, key: String)] = []
    /// The device this ledger belongs to, as a change's `origin` names it (set by `prepare`): a pulled change of
    /// another origin settles none of its ops. Nil (before `prepare`): every change's key is looked up.
    public private(set) var ownOrigin: String?
    /// Set when `idleClaim` found no unsettled op; cleared by `save`, the one way an op becomes unsettled (nothing
    /// moves a settled op back, and this ledger is its file's one writer): while set, a pass's idle claim is answered
    /// without a read transaction of its own.
    var knownIdle = false
    /// Whether the ledger holds no op at all (nil until first asked); false from the first `save`, the only writer of
    /// `ops` rows (a device that never saved an edit, every receiver, has none): its rebuilds replay nothing, so they
    /// skip the read of the draft's ops.
    var knownEmpty: Bool?

    /// Where the lease owner and the install id come from: the system's generator, or a seeded one (the simulation's,
    /// so a seed gives the same keys on every run).
    private var generator: SeededGenerator?

    /// Opens (creating) the ledger at `path`. `generator` (default: the system's randomness) draws the lease owner and,
    /// in `prepare`, a new install id.
    /// Deletes a ledger's file and its WAL, shared-memory and journal files (a reinstall: the app's data is gone).
    /// The ledger must be closed.
    public static func removeFiles(at path: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = path + suffix
            if FileManager.default.fileExists(atPath: file) { try FileManager.default.removeItem(atPath: file) }
        }
    }

    /// The page size of a new ledger: a pass writes a few rows into a handful of B-tree pages, each a WAL frame.
    static let pageSize = 1_024

    /// `locking: .exclusive` (a pool's devices) keeps the file to this process until it closes: no `-shm` locks per
    /// transaction, and nothing else can read it meanwhile (`Locking`; docs/DEVICE.md, "Device pool").
    public init(path: String, synchronous: Synchronous = .full, generator: SeededGenerator? = nil,
                locking: Locking = .normal, busyTimeoutMs: Int32 = 5_000) throws {
        database = try Database(path: path, synchronous: synchronous, busyTimeoutMs: busyTimeoutMs,
                                pageSize: Self.pageSize, locking: locking)
        try database.migrate(Self.migrations, fresh: Self.schema)
        let version = try database.schemaVersion()
        guard version <= Self.migrations.count else {
            throw DeviceError.notALedger(path: path, reason: "schema version \(version) is newer than this build's")
        }
        self.generator = generator
        var system = SystemRandomNumberGenerator()
        let draw = self.generator?.next() ?? system.next()
        leaseOwner = String(draw & 0xFFFF_FFFF, radix: 16)
    }

    /// Opens an existing ledger for reading (the `status` subcommand): refuses a file that is missing or not one.
    public static func openExisting(path: String) throws -> Ledger {
        guard FileManager.default.fileExists(atPath: path) else {
            throw DeviceError.notALedger(path: path, reason: "no such file")
        }
        let ledger: Ledger
        do {
            // A running device's writer never blocks this read for long (WAL); a pool's lock is held until it stops.
            ledger = try Ledger(path: path, synchronous: .normal, busyTimeoutMs: 1_000)
        } catch let error as SQLiteError where error.isBusy {
            throw DeviceError.ledgerLocked(path: path)
        }
        guard try ledger.stateString("install") != nil else {
            throw DeviceError.notALedger(path: path, reason: "no device has run with it")
        }
        return ledger
    }

    // MARK: - State

    func stateString(_ key: String) throws -> String? {
        try database.first("SELECT value FROM state WHERE key = ?", key) { $0.optionalString(0) } ?? nil
    }

    func stateDouble(_ key: String) throws -> Double? {
        try database.first("SELECT value FROM state WHERE key = ?", key) { $0.isNull(0) ? nil : $0.double(0) } ?? nil
    }

    func setState(_ key: String, _ value: SQLBindable) throws {
        try database.run("""
            INSERT INTO state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value
            """, key, value.sqlValue)
    }

    /// The highest change seq durably applied.
    public func cursor() throws -> Int { try database.scalarInt("SELECT value FROM state WHERE key = 'cursor'") ?? 0 }

    /// Binds the ledger to a device (refusing one made by another device), remembers the clock and budget for the
    /// `status` subcommand, closes the passes a killed process left open, and returns what to resume from.
    public func prepare(identity: DeviceIdentity, clock: SimClock, settings: DeviceSettings, now: Double) throws
        -> RestoredState
    {
        keepsOwnWrites = settings.ownWrites == .keep
        ownOrigin = identity.device
        try database.transaction {
            if let owner = try stateString("device"), owner != identity.device {
                throw DeviceError.notALedger(path: path, reason: "it belongs to device \"\(owner)\"")
            }
            if try stateString("install") == nil {
                var system = SystemRandomNumberGenerator()
                let draw = generator?.next() ?? system.next()
                try setState("install", String(draw & 0xFFFF_FFFF_FFFF, radix: 36))
            }
            try setState("device", identity.device)
            try setState("account", identity.account)
            try setState("platform", identity.platform.rawValue)
            try setState("epoch_micros", clock.epochMicros)
            try setState("time_scale", clock.scale)
            try setState("freshness_budget_sec", settings.freshnessBudgetSec)
            try database.run("""
                UPDATE passes SET outcome = 'interrupted', ended_sim = started_sim WHERE ended_sim IS NULL
                """)
        }
        // `opQueue: memory`: the queue of the process that ran before lived in its memory, and died with it.
        let lostOps = settings.opQueue == .memory ? try dropQueue() : []
        let successTimes = try database.query("""
            SELECT ended_sim FROM (SELECT ended_sim, id FROM passes WHERE success = 1 ORDER BY id DESC LIMIT 1000)
            ORDER BY id
            """) { $0.double(0) }
        let scheduledRuns = try database.query("""
            SELECT started_sim FROM (SELECT started_sim, id FROM passes
                WHERE trigger IN ('periodic', 'opportunistic', 'interval') ORDER BY id DESC LIMIT 1000)
            ORDER BY id
            """) { $0.double(0) }
        return RestoredState(cursor: try cursor(),
                             head: try database.scalarInt("SELECT value FROM state WHERE key = 'head'") ?? 0,
                             nextPassID: (try database.scalarInt("SELECT max(id) FROM passes") ?? 0) + 1,
                             successTimes: successTimes, scheduledRuns: scheduledRuns, lostOps: lostOps)
    }

    /// The keys of every unsettled op (not completed, not needing attention), in `local_seq` order.
    public func unsettledKeys() throws -> [String] {
        try database.query("""
            SELECT key FROM ops WHERE status NOT IN ('completed', 'needsAttention') ORDER BY local_seq
            """) { $0.string(0) }
    }

    /// `opQueue: memory`: deletes every unsettled op, as an app whose queue lived in memory loses it with its
    /// process, and rebuilds the replica rows they touched. Returns their keys. One transaction.
    @discardableResult
    public func dropQueue() throws -> [String] {
        try database.transaction {
            let keys = try unsettledKeys()
            let drafts = try database.query("""
                SELECT DISTINCT draft FROM ops WHERE status NOT IN ('completed', 'needsAttention')
                """) { $0.string(0) }
            try database.run("DELETE FROM ops WHERE status NOT IN ('completed', 'needsAttention')")
            for draft in drafts { try rebuild(draft: draft) }
            return keys
        }
    }

    /// `cursorCommit: beforePage`: moves the cursor on its own, before the page it covers is applied.
    public func commitCursor(to seq: Int) throws {
        try database.transaction {
            try setState("cursor", seq)
            try database.run("UPDATE state SET value = max(value, ?) WHERE key = 'head'", seq)
        }
    }

    // MARK: - Local edits

    /// Commits a local edit: the op (with its idempotency key, created here once) and the replica, in ONE
    /// transaction; `base` is the replica's version of the draft (0 when it has none). Only after this returns is
    /// the edit "saved on this device".
    public func save(_ edit: LocalEdit, device: String, wall: Int64) throws -> SavedEdit {
        knownIdle = false
        knownEmpty = false
        return try database.transaction {
            // Any action on any draft is recorded: the server decides (an update of a draft it does not have, a
            // delete of one already gone); a refusal ends the op in needsAttention and the replica forgets it.
            // What the user saw of the draft as they began the edit: the launcher's read-your-writes observation.
            let before = try database.first("SELECT id, title, body, version, deleted FROM drafts WHERE id = ?",
                                            edit.draft) {
                DraftRow(id: $0.string(0), title: $0.optionalString(1), body: $0.optionalString(2),
                         version: $0.int(3), deleted: $0.bool(4))
            }
            let base = before?.version ?? 0
            let localSeq = (try database.scalarInt("SELECT max(local_seq) FROM ops") ?? 0) + 1
            let install = try stateString("install") ?? "0"
            let key = "\(device)-\(install)-\(localSeq)"
            try database.run("""
                INSERT INTO ops(key, local_seq, draft, action, base, title, body, status, saved_wall)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'savedOnDevice', ?)
                """, key, localSeq, edit.draft, edit.action.rawValue, base, edit.title, edit.body, wall)
            try rebuild(draft: edit.draft)
            return SavedEdit(key: key, draft: edit.draft, action: edit.action, base: base, before: before)
        }
    }

    /// The replica's row for `draft` = the server's state (`shadow`) with every unsettled local op replayed on it.
    /// So a change pulled from the server never hides a pending edit, and an op that ends `needsAttention` stops
    /// showing in the replica.
    /// `shadow`: the draft's shadow row when the caller has just written it (nil: it is read).
    func rebuild(draft: String, shadow: ShadowRow? = nil, shadowAt seen: Int? = nil) throws {
        var row = try shadow ?? database.first("SELECT title, body, version, deleted FROM shadow WHERE id = ?", draft,
                                              map: ShadowRow.init)
        // The shadow holds the server's changes up to `seen` (the cursor, or the end of the page being applied): an
        // acknowledged op applied above it is not in the shadow yet, and without it the user's own write vanishes.
        let above = try seen ?? cursor()
        // A ledger with no op at all has nothing to replay.
        if try !holdsNoOps() {
            try database.forEach(Self.rebuildSQL, [draft, above]) { op in
                if op.string(3) == "completed" && !keepsOwnWrites {
                    hiddenOwnWrites.append((draft, op.string(4)))
                    return
                }
                let version = (row?.version ?? 0) + 1
                switch DraftAction(rawValue: op.string(0)) ?? .update {
                case .create:
                    row = ShadowRow(title: op.optionalString(1), body: op.optionalString(2), version: version,
                                    deleted: false)
                case .update:
                    row = ShadowRow(title: op.optionalString(1) ?? row?.title, body: op.optionalString(2) ?? row?.body,
                                    version: version, deleted: false)
                case .delete:
                    row = ShadowRow(title: row?.title, body: row?.body, version: version, deleted: true)
                }
            }
        }
        if let row {
            try database.run("""
                INSERT INTO drafts(id, title, body, version, deleted) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET title = excluded.title, body = excluded.body,
                    version = excluded.version, deleted = excluded.deleted
                """, draft, row.title, row.body, row.version, row.deleted)
        } else {
            try database.run("DELETE FROM drafts WHERE id = ?", draft)
        }
    }

    /// Whether the ledger holds no op at all (`knownEmpty`, asked of the file once).
    func holdsNoOps() throws -> Bool {
        if knownEmpty == nil { knownEmpty = try database.scalarInt("SELECT NOT EXISTS(SELECT 1 FROM ops)") == 1 }
        return knownEmpty == true
    }

    // MARK: - The pass

    public func beginPass(id: Int, trigger: Trigger, at now: Double) throws {
        try database.run("INSERT OR REPLACE INTO passes(id, trigger, started_sim) VALUES (?, ?, ?)",
                         id, trigger.rawValue, now)
    }

    /// Reclaims expired leases, then claims up to `limit` eligible ops in `local_seq` order under a lease, in one
    /// transaction. An op waits while an earlier op of the same draft is unsettled and not in this batch, so a
    /// draft's edits reach the server in the order they were made. When the request `beginsPass`, the pass's start
    /// is recorded in the same transaction, but only when the claim changed something: a claim that found nothing
    /// writes nothing (`ClaimResult.passDeferred`), and the pass's row waits for its page's commit or its end.
    public func claim(_ request: ClaimRequest, maxBytes: Int = 768 * 1024) throws -> ClaimResult {
        try database.transaction {
            // An op claimed with no lease (`leases` off) has a NULL expiry, which this never matches: stranded.
            let reclaimed = try database.run(Self.reclaimSQL, request.now)
            let stranded = try database.scalarInt(Self.strandedSQL) ?? 0
            var candidates: [(op: Op, status: String, attempts: Int, next: Double)] = []
            var blocked: Set<String> = []
            var bytes = 0
            var stop = false
            let owner = "\(leaseOwner)/\(request.purpose == .beacon ? "beacon" : "pass")"
            try database.forEach("""
                SELECT key, draft, action, base, title, body, status, attempts, next_attempt_sim FROM ops
                WHERE status NOT IN ('completed', 'needsAttention') ORDER BY local_seq \
                \(request.newestFirst ? "DESC" : "")
                """, []) { row in
                guard !stop else { return }
                let draft = row.string(1)
                let status = row.string(6)
                let eligible = status != OpStatus.sending.rawValue
                    && (request.ignoreBackoff || row.double(8) <= request.now)
                guard eligible, !blocked.contains(draft) else {
                    blocked.insert(draft)
                    return
                }
                let op = Op(key: row.string(0), draft: draft, action: DraftAction(rawValue: row.string(2)) ?? .update,
                            base: row.int(3), title: row.optionalString(4), body: row.optionalString(5))
                let size = (op.title?.utf8.count ?? 0) + (op.body?.utf8.count ?? 0) + 256
                if !candidates.isEmpty && bytes + size > maxBytes {
                    stop = true
                    return
                }
                bytes += size
                candidates.append((op, status, row.int(7), row.double(8)))
                if candidates.count >= request.limit { stop = true }
            }
            var deferred = false
            if case .pass(let id) = request.purpose, let trigger = request.beginsPass {
                // Nothing reclaimed, nothing to claim: the reclaim matched no row, so the transaction is still clean
                // and commits without writing a page. The pass's row goes with the first write the pass makes.
                if reclaimed == 0 && candidates.isEmpty {
                    deferred = true
                } else {
                    try beginPass(id: id, trigger: trigger, at: request.now)
                }
            }
            let expires: Double? = request.leases ? request.now + request.leaseSec : nil
            var claimed: [ClaimedOp] = []
            for candidate in candidates {
                let attempt = candidate.attempts + 1
                // `keyPerAttempt`: a resend goes out under a key of its own (the bug this switch models).
                let wireKey: String? = request.renewKeys && attempt > 1 ? "\(candidate.op.key)~\(attempt)" : nil
                try database.run("""
                    UPDATE ops SET status = 'sending', attempts = attempts + 1, lease_owner = ?, lease_expires_sim = ?,
                        wire_key = coalesce(?, wire_key)
                    WHERE key = ?
                    """, owner, expires, wireKey, candidate.op.key)
                var sent = candidate.op
                if let wireKey { sent.key = wireKey }
                claimed.append(ClaimedOp(op: sent, attempt: attempt, key: candidate.op.key))
            }
            return ClaimResult(purpose: request.purpose, ops: claimed, reclaimed: reclaimed,
                               stranded: request.leases ? 0 : stranded, passDeferred: deferred)
        }
    }

    /// Records each op's outcome in one transaction. A settled op is never moved back to unsettled.
    public func record(_ outcomes: [OpOutcome], wall: Int64) throws {
        try database.transaction {
            var touched: Set<String> = []
            for outcome in outcomes {
                switch outcome.kind {
                case .acknowledged(let seq):
                    try database.run("""
                        UPDATE ops SET status = 'completed', result_seq = coalesce(?, result_seq), completed_wall = ?,
                            lease_owner = NULL, lease_expires_sim = NULL, last_error = NULL
                        WHERE key = ? AND status != 'completed'
                        """, seq, wall, outcome.key)
                case .unknown(let retryAt, let reason):
                    let changed = try database.run("""
                        UPDATE ops SET status = 'confirmationDelayed', next_attempt_sim = ?, last_error = ?,
                            lease_owner = NULL, lease_expires_sim = NULL
                        WHERE key = ? AND status NOT IN ('completed', 'needsAttention')
                        """, retryAt, reason, outcome.key)
                    if changed > 0 {
                        try database.run("UPDATE state SET value = value + 1 WHERE key = 'unknown_outcomes'")
                    }
                case .retry(let at, let reason):
                    try database.run("""
                        UPDATE ops SET status = 'waitingToSend', next_attempt_sim = ?, last_error = ?,
                            lease_owner = NULL, lease_expires_sim = NULL
                        WHERE key = ? AND status NOT IN ('completed', 'needsAttention')
                        """, at, reason, outcome.key)
                case .needsAttention(let reason):
                    let changed = try database.run("""
                        UPDATE ops SET status = 'needsAttention', last_error = ?, lease_owner = NULL,
                            lease_expires_sim = NULL
                        WHERE key = ? AND status NOT IN ('completed', 'needsAttention')
                        """, reason, outcome.key)
                    if changed > 0, let draft = try database.first("SELECT draft FROM ops WHERE key = ?", outcome.key,
                                                                    map: { $0.string(0) }) {
                        touched.insert(draft)
                    }
                }
            }
            // An op the server will never apply no longer shows in the replica.
            for draft in touched { try rebuild(draft: draft) }
        }
    }

    /// Applies a page and moves the cursor, in ONE transaction: the server's state goes to `shadow`, the replica is
    /// rebuilt for each draft touched (copied from `shadow` in a ledger with no op), and an op whose own change
    /// arrives is completed (the pull settles an unknown outcome). Refuses (changing nothing) when the cursor is not
    /// where the page starts. Returns the keys of local ops this page completed.
    @discardableResult
    public func apply(_ page: PageApplication, wall: Int64) throws -> [String] {
        try database.transaction {
            let current = try cursor()
            let expected = page.cursorCommitted ? page.to : page.from
            guard current == expected else { throw DeviceError.cursorMoved(expected: expected, found: current) }
            let completed = try holdsNoOps() ? copyFromShadow(page) : applyOverOps(page, wall: wall)
            guard !page.cursorCommitted else { return completed }
            // The cursor and the head (never lowered) in one statement.
            try database.run(Self.cursorSQL, page.to, page.to)
            return completed
        }
    }

    /// `apply` in a ledger with no op (every receiver): no op a change could settle and nothing to replay on a shadow
    /// row, so each draft's replica row is its shadow row, copied by SQLite with no row read back. Completes nothing.
    private func copyFromShadow(_ page: PageApplication) throws -> [String] {
        var drafts: Set<String> = []
        for change in page.changes {
            try database.run(Self.shadowWriteSQL(change.action), change.draft, change.title, change.body,
                             change.version)
            drafts.insert(change.draft)
        }
        for draft in drafts { try database.run(Self.copyShadowSQL, draft) }
        return []
    }

    /// `apply` in a ledger with ops: settles this device's own ops by their changes and rebuilds each touched draft's
    /// replica from its shadow row and its ops. Returns the keys it completed.
    private func applyOverOps(_ page: PageApplication, wall: Int64) throws -> [String] {
        // Each draft's shadow row as the page's last change of it left it (the upsert returns it): the rebuild below
        // starts from it instead of reading it again.
        var shadows: [String: ShadowRow] = [:]
        var completed: [String] = []
        for change in page.changes {
            shadows[change.draft] = try database.first(Self.shadowSQL(change.action), change.draft, change.title,
                                                       change.body, change.version, map: ShadowRow.init)
            // Only this device's own ops can be settled by a change, and the server writes the device that sent an
            // op as its change's origin (a key another device used is refused): another origin's change settles
            // nothing, and its statement is skipped.
            guard ownOrigin.map({ $0 == change.origin }) ?? true else { continue }
            let settled = try database.run(Self.settleSQL, change.seq, wall, change.key, change.key)
            if settled > 0 { completed.append(change.key) }
        }
        for (draft, shadow) in shadows { try rebuild(draft: draft, shadow: shadow, shadowAt: page.to) }
        return completed
    }

    /// Records how a pass ended, the head last seen, the next desired run and, for a successful pass, the sync time.
    /// The pass's row is made here when its start was deferred (a claim that found nothing, then no page applied).
    public func endPass(_ record: PassRecord) throws {
        try database.transaction {
            try database.run("""
                INSERT INTO passes(id, trigger, started_sim, ended_sim, outcome, sent, pulled, cut_off, success)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET ended_sim = excluded.ended_sim, outcome = excluded.outcome,
                    sent = excluded.sent, pulled = excluded.pulled, cut_off = excluded.cut_off,
                    success = excluded.success
                """, record.id, record.trigger.rawValue, record.started, record.ended, record.outcome.rawValue,
                record.sent, record.pulled, record.cutOff, record.success)
            // The head (never lowered), the next desired run and, for a success, the sync time: one statement.
            let next = record.nextDesired.map { SQLValue.real($0) } ?? .null
            if record.success {
                try database.run(Self.endSuccessSQL, record.head, next, record.ended)
            } else {
                try database.run(Self.endSQL, record.head, next)
            }
        }
    }

    /// Every pass recorded, in the order they started.
    public func passes() throws -> [PassRow] {
        var rows: [PassRow] = []
        try database.forEach("""
            SELECT id, trigger, started_sim, ended_sim, outcome, sent, pulled, cut_off, success FROM passes ORDER BY id
            """, []) { row in
            rows.append(PassRow(id: row.int(0), trigger: Trigger(rawValue: row.string(1)) ?? .manual,
                                started: row.double(2), ended: row.optionalDouble(3),
                                outcome: row.optionalString(4).flatMap(PassOutcome.init(rawValue:)),
                                sent: row.int(5), pulled: row.int(6), cutOff: row.bool(7), success: row.bool(8)))
        }
        return rows
    }

    public func recordAppOpen(at now: Double, dataAge: Double?) throws {
        try database.run("INSERT INTO opens(sim, data_age_sec) VALUES (?, ?)", now, dataAge)
    }

    /// Remembers the last guarantee reported, for `status --db`.
    public func recordGuarantee(_ line: EventLine) throws {
        try setState("guarantee", JSONValue.object(line.fields).description)
    }
}
