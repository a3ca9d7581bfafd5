import CSQLite
import CSQLiteWAL
#if canImport(Glibc)
import Glibc
#endif

/// How hard a commit works to reach the disk (`PRAGMA synchronous`).
public enum Synchronous: String, Sendable, CaseIterable {
    case off = "OFF", normal = "NORMAL", full = "FULL"
}

/// Whether a connection lets go of the file's locks between transactions (`PRAGMA locking_mode`).
public enum Locking: String, Sendable, CaseIterable {
    /// SQLite's default: every transaction takes and releases its locks; in WAL mode they are `fcntl` locks on the
    /// `-shm` file, whose wal-index every connection shares, so other connections and processes read beside a writer.
    case normal = "NORMAL"
    /// The connection keeps the file to itself until it closes: SQLite's docs (wal.html, "Use of WAL Without
    /// Shared-Memory"; pragma.html, `locking_mode`) say that set before the first WAL access, it keeps the wal-index
    /// in heap memory and never makes or locks a `-shm` file. No other connection can read the file meanwhile (it
    /// gets `SQLITE_BUSY`). After a kill the kernel drops the lock and the next open rebuilds the index from the WAL.
    /// Such a connection also writes each commit's WAL frames with one `pwrite` instead of two a page (CSQLiteWAL's
    /// VFS, flushed by a WAL hook before the committing statement returns): safe because no other connection reads
    /// the WAL while it is open.
    case exclusive = "EXCLUSIVE"
}

/// One SQLite connection, opened in WAL mode with a busy timeout and foreign keys on. Statements are prepared once
/// and cached by their SQL. A connection belongs to one thread.
///
/// A path made by `Database.inMemory(name:)` names a database held in this process's memory (SQLite's `memdb`
/// VFS) instead of a file: every connection opened on the same name shares it, it lasts while one of them is open,
/// and it keeps its journal in memory (WAL needs a file). The simulation keeps its ledgers so (docs/SIMULATION.md).
///
/// `@unchecked Sendable` so a connection can be opened on one thread and handed to the IO thread that then owns it.
public final class Database: @unchecked Sendable {
    let handle: OpaquePointer
    public let path: String
    private var cache: [StatementKey: Statement] = [:]
    private var recent = RecentStatements()
    private var transactionDepth = 0
    /// A transaction opened by `beginGroup()`: each `transaction` inside it is a savepoint of its own.
    private var groupOpen = false
    /// `sqlite3_total_changes64` when the open group began: while it is the same, the group has written nothing that
    /// a failing step must keep, so a step needs no savepoint.
    private var groupStartChanges: Int64 = 0

    /// `pageSize` is the page size a new file is made with (SQLite's default, 4,096, when nil); an existing file keeps
    /// its own. `locking: .exclusive` holds the file for this connection alone until it closes (`Locking`).
    public init(path: String, synchronous: Synchronous = .full, busyTimeoutMs: Int32 = 5_000,
                pageSize: Int? = nil, locking: Locking = .normal) throws {
        _ = Self.configured
        var handle: OpaquePointer?
        let memory = Self.isInMemory(path)
        // URIs only for the in-memory form: a file whose name begins with "file:" stays a file.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | (memory ? SQLITE_OPEN_URI : 0)
        // A file kept to this connection gathers each commit's WAL writes into one (`Locking.exclusive`).
        let gathers = locking == .exclusive && !memory
        let rc = sqlite3_open_v2(path, &handle, flags, gathers ? synclab_wal_buffer_vfs() : nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: rc, message: "\(message): \(path)")
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMs)
        // Before anything reads the file: a WAL file first read in exclusive mode gets its wal-index in the heap.
        if locking == .exclusive {
            let mode = try scalarString("PRAGMA locking_mode=EXCLUSIVE")
            guard mode.lowercased() == "exclusive" else {
                throw SQLiteError(code: SQLITE_ERROR, message: "exclusive locking refused (it is \(mode)): \(path)")
            }
        }
        // Before the journal mode: switching a new file to WAL writes its header, and with it the page size.
        if let pageSize { try execute("PRAGMA page_size=\(pageSize)") }
        let mode = try scalarString("PRAGMA journal_mode=WAL")
        guard mode.lowercased() == "wal" || (memory && mode.lowercased() == "memory") else {
            throw SQLiteError(code: SQLITE_ERROR, message: "WAL mode refused (journal_mode is \(mode)): \(path)")
        }
        try execute("PRAGMA synchronous=\(synchronous.rawValue)")
        try execute("PRAGMA foreign_keys=ON")
        if gathers { synclab_wal_buffer_attach(handle) }
    }

    /// SQLite's process-wide settings, made once before the first connection opens (`synclab_sqlite_memstatus_off`).
    private static let configured: Int32 = synclab_sqlite_memstatus_off()

    deinit {
        cache.removeAll()
        recent = RecentStatements()
        sqlite3_close_v2(handle)
    }

    /// The path of the in-memory database `name` (letters, digits, `-`, `_`, `.` and `/`), shared by every
    /// connection of this process that opens it.
    public static func inMemory(name: String) -> String { "file:/\(name)?vfs=memdb" }

    /// Whether `path` names an in-memory database (`inMemory(name:)`).
    public static func isInMemory(_ path: String) -> Bool { path.hasPrefix("file:/") && path.hasSuffix("?vfs=memdb") }

    /// Writes the whole database to a new file at `file` (which must not exist), as one consistent snapshot.
    /// An in-memory database is written as its pages are (`sqlite3_serialize`), marked as a WAL database (header
    /// bytes 18 and 19), so the file is what a cleanly closed database of the lab's looks like; one write, no fsync.
    /// A file database is copied with `VACUUM INTO`.
    public func write(to file: String) throws {
        guard Self.isInMemory(path) else {
            try run("VACUUM INTO ?", file)
            return
        }
        var size: sqlite3_int64 = 0
        var copied = false
        var bytes = sqlite3_serialize(handle, "main", &size, UInt32(SQLITE_SERIALIZE_NOCOPY))
        if bytes == nil {
            bytes = sqlite3_serialize(handle, "main", &size, 0)
            copied = true
        }
        guard let bytes else { throw SQLiteError(code: SQLITE_NOMEM, message: "cannot serialize \(path)") }
        defer { if copied { sqlite3_free(bytes) } }
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SQLiteError(code: SQLITE_CANTOPEN,
                message: "cannot create \(file): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var header = Array(UnsafeBufferPointer(start: bytes, count: min(Int(size), 100)))
        if header.count == 100 {
            header[18] = 2  // file format write version: WAL
            header[19] = 2  // read version: WAL
        }
        let rest = UnsafeBufferPointer(start: bytes + header.count, count: Int(size) - header.count)
        guard header.withUnsafeBufferPointer({ writeAll(fd, $0) }), writeAll(fd, rest) else {
            throw SQLiteError(code: SQLITE_IOERR, message: "cannot write \(file): \(String(cString: strerror(errno)))")
        }
    }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs one or more statements that return no rows, without caching (schema, pragmas).
    public func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    /// The cached statement for `sql`, prepared on first use.
    public func statement(_ sql: String) throws -> Statement {
        // Most statements come from the same literal every time: found by where its bytes are, then checked whole.
        let slot = recent.slot(of: sql)
        if let slot, let hit = recent.statement(at: slot, for: sql) { return hit }
        let key = StatementKey(sql: sql)
        let statement: Statement
        if let cached = cache[key] {
            statement = cached
        } else {
            statement = try Statement(database: self, sql: sql)
            cache[key] = statement
        }
        if let slot { recent.remember(statement, at: slot) }
        return statement
    }

    /// Runs a statement that returns no rows; returns the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ values: SQLBindable...) throws -> Int {
        let statement = try statement(sql)
        try statement.reset(binding: values)
        defer { statement.finish() }
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Calls `body` for each row.
    public func forEach(_ sql: String, _ values: SQLBindable..., body: (Row) throws -> Void) throws {
        try forEach(sql, values, body: body)
    }

    public func forEach(_ sql: String, _ values: [SQLBindable], body: (Row) throws -> Void) throws {
        let statement = try statement(sql)
        try statement.reset(binding: values)
        defer { statement.finish() }
        while try statement.step() {
            try body(Row(handle: statement.handle))
        }
    }

    /// Runs a statement that returns no rows with `values` bound in order; returns the number of rows changed.
    /// Faster than the `SQLBindable` forms for many values: no existential per value, and text is not copied twice.
    @discardableResult
    public func run(_ sql: String, values: [SQLValue]) throws -> Int {
        let statement = try statement(sql)
        return try statement.withBindings(values) {
            while try statement.step() {}
            return Int(sqlite3_changes(handle))
        }
    }

    /// Calls `body` for each row, with `values` bound in order (see `run(_:values:)`).
    public func forEach(_ sql: String, values: [SQLValue], body: (Row) throws -> Void) throws {
        let statement = try statement(sql)
        try statement.withBindings(values) {
            while try statement.step() {
                try body(Row(handle: statement.handle))
            }
        }
    }

    /// Maps every row.
    public func query<T>(_ sql: String, _ values: SQLBindable..., map: (Row) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEach(sql, values) { result.append(try map($0)) }
        return result
    }

    /// The first row mapped, or nil.
    public func first<T>(_ sql: String, _ values: SQLBindable..., map: (Row) throws -> T) throws -> T? {
        let statement = try statement(sql)
        try statement.reset(binding: values)
        defer { statement.finish() }
        guard try statement.step() else { return nil }
        return try map(Row(handle: statement.handle))
    }

    /// The first column of the first row as an integer, or nil when there is no row or it is NULL.
    public func scalarInt(_ sql: String, _ values: SQLBindable...) throws -> Int? {
        let statement = try statement(sql)
        try statement.reset(binding: values)
        defer { statement.finish() }
        guard try statement.step() else { return nil }
        let row = Row(handle: statement.handle)
        return row.isNull(0) ? nil : row.int(0)
    }

    private func scalarString(_ sql: String) throws -> String {
        let statement = try Statement(database: self, sql: sql)
        try statement.reset(binding: [])
        guard try statement.step() else { return "" }
        return Row(handle: statement.handle).string(0)
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; rolls back and rethrows when it throws. Nested calls join the
    /// outer transaction; inside a group (`beginGroup`) each is a savepoint, undone alone when it throws — but while
    /// the group has written nothing (its first writing step), there is nothing to keep: undoing the step is undoing
    /// the group's transaction, so it pays for no savepoint (its statements and the copies of the pages it touches).
    /// The result may be ignored: a body that ends in `run` returns its change count.
    @discardableResult
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if transactionDepth == 1 && groupOpen && sqlite3_total_changes64(handle) == groupStartChanges {
            transactionDepth = 2
            let result: T
            do {
                result = try body()
            } catch {
                transactionDepth = 1
                restartGroup()
                throw error
            }
            transactionDepth = 1
            return result
        }
        if transactionDepth > 0 && groupOpen {
            let savepoint = Savepoint.at(depth: transactionDepth)
            try run(savepoint.open)
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            do {
                let result = try body()
                try run(savepoint.release)
                return result
            } catch {
                _ = try? run(savepoint.rollback)
                _ = try? run(savepoint.release)
                throw error
            }
        }
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            return try body()
        }
        try run("BEGIN IMMEDIATE")
        transactionDepth = 1
        do {
            let result = try body()
            transactionDepth = 0
            try run("COMMIT")
            return result
        } catch {
            transactionDepth = 0
            if sqlite3_get_autocommit(handle) == 0 {
                _ = try? run("ROLLBACK")
            }
            throw error
        }
    }

    /// Opens a transaction that stays open across calls until `commitGroup()`: several steps, each atomic on its own
    /// (a savepoint), reach the disk in one commit. The caller commits before anything those steps describe is seen
    /// outside the process, so a kill at any moment loses only steps nobody has seen the effect of.
    public func beginGroup() throws {
        guard transactionDepth == 0 else { return }
        try run("BEGIN IMMEDIATE")
        transactionDepth = 1
        groupOpen = true
        groupStartChanges = sqlite3_total_changes64(handle)
    }

    /// A step of a group that had written nothing failed: its writes are the only ones in the transaction; roll it
    /// back and begin again, so the group stays open and empty, as a savepoint rolled back would have left it. If it
    /// cannot begin again, the group is closed and the next step opens one.
    private func restartGroup() {
        if sqlite3_get_autocommit(handle) == 0 { _ = try? run("ROLLBACK") }
        do {
            try run("BEGIN IMMEDIATE")
            groupStartChanges = sqlite3_total_changes64(handle)
        } catch {
            groupOpen = false
            transactionDepth = 0
        }
    }

    public var inGroup: Bool { groupOpen }

    /// Commits the group's steps; a failed commit rolls them all back and rethrows.
    public func commitGroup() throws {
        guard groupOpen else { return }
        groupOpen = false
        transactionDepth = 0
        do {
            try run("COMMIT")
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = try? run("ROLLBACK") }
            throw error
        }
    }

    /// Undoes the group's steps, as a process killed before `commitGroup()` would find them: never written.
    public func rollbackGroup() throws {
        guard groupOpen else { return }
        groupOpen = false
        transactionDepth = 0
        if sqlite3_get_autocommit(handle) == 0 { try run("ROLLBACK") }
    }

    /// With exclusive locking: the writes SQLite asked of the WAL file since it opened (`asked`), and the writes the
    /// file was given for them (`made`, one a commit when its frames follow one another); nil otherwise.
    public var walWrites: (asked: Int, made: Int)? {
        var asked: Int64 = 0
        var made: Int64 = 0
        guard synclab_wal_buffer_counts(handle, &asked, &made) == 1 else { return nil }
        return (Int(asked), Int(made))
    }

    /// The current `PRAGMA locking_mode`: "normal" or "exclusive".
    public func lockingMode() throws -> String { try scalarString("PRAGMA locking_mode") }

    /// The current `PRAGMA journal_mode`.
    public func journalMode() throws -> String { try scalarString("PRAGMA journal_mode") }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws -> String { try scalarString("PRAGMA integrity_check") }

    /// Brings the schema to the newest version: runs each migration whose version is above `PRAGMA user_version`,
    /// each in its own transaction together with the version bump. Returns the versions it ran.
    ///
    /// `fresh`: the schema the migrations end at, made at once, with its version, in a file that has no schema yet
    /// (version 0 and no table): a new file then skips the steps only old files need.
    @discardableResult
    public func migrate(_ migrations: [Migration], fresh: Migration? = nil) throws -> [Int] {
        if let fresh {
            let made = try transaction {
                let empty = try scalarInt("PRAGMA user_version") == 0
                    && scalarInt("SELECT count(*) FROM sqlite_master") == 0
                guard empty else { return false }
                try execute(fresh.sql)
                try execute("PRAGMA user_version=\(fresh.version)")
                return true
            }
            if made { return [fresh.version] }
        }
        var ran: [Int] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) {
            try transaction {
                let current = try scalarInt("PRAGMA user_version") ?? 0
                guard migration.version > current else { return }
                try execute(migration.sql)
                try execute("PRAGMA user_version=\(migration.version)")
                ran.append(migration.version)
            }
        }
        return ran
    }

    /// `PRAGMA user_version`.
    public func schemaVersion() throws -> Int { try scalarInt("PRAGMA user_version") ?? 0 }
}

/// One schema step, identified by a version number that only grows.
public struct Migration: Sendable {
    public let version: Int
    public let sql: String

    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}

/// Writes all of `buffer` to `fd`; false on an error (errno says which).
private func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
    var offset = 0
    while offset < buffer.count {
        let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += n
    }
    return true
}

/// A small table in front of the statement cache, found by where a SQL string's bytes are rather than by hashing
/// them: a statement run from a literal has its bytes at the same address every time, so its slot is a shift and a
/// mask away. A hit is the slot's statement only when its text equals `sql` (the same literal compares equal at
/// once), so a string whose bytes merely came to lie where another's were is never taken for it.
struct RecentStatements {
    private var entries: [Statement?] = Array(repeating: nil, count: 64)

    /// The slot for `sql`'s bytes; nil when they are not contiguous in memory.
    func slot(of sql: String) -> Int? {
        guard let start = sql.utf8.withContiguousStorageIfAvailable({ UInt(bitPattern: $0.baseAddress) }),
              start != 0 else { return nil }
        return Int(truncatingIfNeeded: (start >> 4) ^ (start >> 10)) & (entries.count - 1)
    }

    func statement(at slot: Int, for sql: String) -> Statement? {
        guard let statement = entries[slot], statement.sql == sql else { return nil }
        return statement
    }

    mutating func remember(_ statement: Statement, at slot: Int) { entries[slot] = statement }
}

/// A statement cache's key: the SQL, hashed by its length and sixteen of its bytes spread over it rather than all of
/// them. A statement's SQL is hundreds of bytes and is looked up on every call: hashing it whole cost a receiving
/// pass ≈ 11 k instructions (callgrind of a device, 2026-12-06). Equal keys are equal SQL, so a shared hash only
/// costs a comparison.
struct StatementKey: Hashable {
    let sql: String

    static func == (lhs: StatementKey, rhs: StatementKey) -> Bool { lhs.sql == rhs.sql }

    func hash(into hasher: inout Hasher) {
        let utf8 = sql.utf8
        hasher.combine(utf8.count)
        let sampled: Void? = utf8.withContiguousStorageIfAvailable { bytes in
            let step = Swift.max(1, bytes.count / 16)
            var index = 0
            while index < bytes.count {
                hasher.combine(bytes[index])
                index += step
            }
        }
        if sampled == nil { hasher.combine(sql) }
    }
}

/// The statements of the savepoint a group's step opens at one depth (`step1`, `step2`, …), spelled once for the
/// usual depths rather than for every step.
struct Savepoint {
    let open: String
    let release: String
    let rollback: String

    init(depth: Int) {
        open = "SAVEPOINT step\(depth)"
        release = "RELEASE step\(depth)"
        rollback = "ROLLBACK TO step\(depth)"
    }

    private static let usual = (0..<8).map(Savepoint.init(depth:))

    static func at(depth: Int) -> Savepoint { depth < usual.count ? usual[depth] : Savepoint(depth: depth) }
}
