import CSQLite
import Foundation
import LabTestSupport
import SQLite
import Testing

@Suite("Database")
struct DatabaseTests {
    /// This test's folder (each test has an instance of the suite of its own).
    let folder = TempFolder()

    @Test("a connection opens in WAL mode, and the mode persists for the next one")
    func walIsOn() throws {
        let path = folder.file("wal.sqlite")
        let db = try Database(path: path)
        #expect(try db.journalMode() == "wal")
        try db.execute("CREATE TABLE t(x)")
        try db.run("INSERT INTO t VALUES (1)")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let second = try Database(path: path, synchronous: .normal)
        #expect(try second.journalMode() == "wal")
        #expect(try second.scalarInt("SELECT count(*) FROM t") == 1)
        #expect(try db.integrityCheck() == "ok")
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try db.scalarInt("PRAGMA synchronous") == 2)  // FULL
        #expect(try second.scalarInt("PRAGMA synchronous") == 1)  // NORMAL
    }

    /// With its memory statistics on, every allocation SQLite makes takes a global mutex to count itself; the lab
    /// turns them off before the first connection opens, so SQLite has counted nothing.
    @Test("SQLite keeps no memory statistics")
    func noMemoryStatistics() throws {
        let db = try Database(path: folder.file("stats.sqlite"))
        try db.execute("CREATE TABLE t(x)")
        for value in 0..<100 { try db.run("INSERT INTO t VALUES (?)", value) }
        #expect(sqlite3_memory_used() == 0)
        #expect(sqlite3_memory_highwater(0) == 0)
    }

    @Test("a new file takes the page size asked for; an existing one keeps its own")
    func pageSizeOfANewFile() throws {
        let path = folder.file("pages.sqlite")
        let db = try Database(path: path, pageSize: 1_024)
        try db.execute("CREATE TABLE t(x)")
        #expect(try db.scalarInt("PRAGMA page_size") == 1_024)
        let reopened = try Database(path: path, pageSize: 8_192)
        #expect(try reopened.scalarInt("PRAGMA page_size") == 1_024)
        let plain = try Database(path: folder.file("default.sqlite"))
        try plain.execute("CREATE TABLE t(x)")
        #expect(try plain.scalarInt("PRAGMA page_size") == 4_096)
    }

    @Test("a database that cannot be opened is an error naming the file")
    func unopenable() throws {
        let path = folder.file("missing-folder/db.sqlite")
        let error = try #require(throws: SQLiteError.self) { try Database(path: path) }
        #expect(error.description.contains(path))
    }

    @Test("a throwing transaction leaves nothing behind")
    func throwingTransactionRollsBack() throws {
        struct Abort: Error {}
        let db = try Database(path: folder.file("tx.sqlite"))
        try db.execute("CREATE TABLE t(x INTEGER)")
        /// `work` throws `E` out of a transaction, and the table is still empty.
        func expectNothingLeft<E: Error>(throwing _: E.Type, sourceLocation: SourceLocation = #_sourceLocation,
                                         _ work: () throws -> Void) throws {
            #expect(throws: E.self, sourceLocation: sourceLocation) { try db.transaction { try work() } }
            #expect(try db.scalarInt("SELECT count(*) FROM t") == 0, sourceLocation: sourceLocation)
        }
        try expectNothingLeft(throwing: Abort.self) {
            try db.run("INSERT INTO t VALUES (?)", 1)
            try db.run("INSERT INTO t VALUES (?)", 2)
            throw Abort()
        }

        // A nested transaction joins the outer one: its failure undoes the outer work too.
        try expectNothingLeft(throwing: Abort.self) {
            try db.run("INSERT INTO t VALUES (?)", 3)
            try db.transaction {
                try db.run("INSERT INTO t VALUES (?)", 4)
                throw Abort()
            }
        }

        // A failing statement inside rolls back just the same, and the connection is usable afterwards.
        try expectNothingLeft(throwing: SQLiteError.self) {
            try db.run("INSERT INTO t VALUES (?)", 5)
            try db.run("INSERT INTO nowhere VALUES (?)", 6)
        }
        let value = try db.transaction {
            try db.run("INSERT INTO t VALUES (?)", 7)
            return try db.scalarInt("SELECT x FROM t")
        }
        #expect(value == 7)
        let other = try Database(path: db.path)
        #expect(try other.query("SELECT x FROM t") { $0.int(0) } == [7])
    }

    /// Two connections to a new database with the table `t(columns)`; the second waits up to `busyTimeoutMs` for
    /// the write lock.
    func twoWriters(_ columns: String, busyTimeoutMs: Int32) throws -> (first: Database, second: Database) {
        let path = folder.file("busy.sqlite")
        let first = try Database(path: path)
        try first.execute("CREATE TABLE t(\(columns))")
        return (first, try Database(path: path, busyTimeoutMs: busyTimeoutMs))
    }

    @Test("a second connection gets busy, waits for the first to commit, then succeeds")
    func busyWaitsThenSucceeds() throws {
        let (first, second) = try twoWriters("writer TEXT, at INTEGER", busyTimeoutMs: 20_000)

        let holding = DispatchSemaphore(value: 0)
        let waiting = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let secondDoneAt = Box<UInt64?>(nil)
        let secondError = Box<String?>(nil)
        let thread = Thread {
            defer { finished.signal() }
            holding.wait()
            waiting.signal()
            do {
                // BEGIN IMMEDIATE cannot take the write lock while the first connection holds it: SQLite's busy
                // handler retries until the first commits.
                try second.transaction {
                    try second.run("INSERT INTO t VALUES ('second', ?)", Int64(DispatchTime.now().uptimeNanoseconds))
                }
                secondDoneAt.value = DispatchTime.now().uptimeNanoseconds
            } catch {
                secondError.value = "\(error)"
            }
        }

        var firstCommittedAt: UInt64 = 0
        try first.transaction {
            try first.run("INSERT INTO t VALUES ('first', 0)")
            thread.start()
            holding.signal()
            #expect(waiting.wait(timeout: .now() + 10) == .success)
            // Hold the lock a little while the other thread is in BEGIN IMMEDIATE.
            usleep(100_000)
            firstCommittedAt = DispatchTime.now().uptimeNanoseconds
        }
        #expect(finished.wait(timeout: .now() + 30) == .success, "the second writer never finished")
        #expect(secondError.value == nil)
        let doneAt = try #require(secondDoneAt.value)
        #expect(doneAt >= firstCommittedAt, "the second writer finished before the first released the lock")
        #expect(try first.query("SELECT writer FROM t ORDER BY rowid") { $0.string(0) } == ["first", "second"])
    }

    @Test("when the busy timeout runs out the error says busy")
    func busyTimeoutRunsOut() throws {
        let (first, impatient) = try twoWriters("x", busyTimeoutMs: 30)
        try first.transaction {
            try first.run("INSERT INTO t VALUES (1)")
            let error = try #require(throws: SQLiteError.self) {
                try impatient.transaction { try impatient.run("INSERT INTO t VALUES (2)") }
            }
            #expect(error.isBusy)
            #expect(error.code & 0xff == ResultCode.busy)
            #expect(error.sql == "BEGIN IMMEDIATE")
        }
        // Readers are never blocked by a writer in WAL mode, and the impatient writer can write now.
        #expect(try impatient.scalarInt("SELECT count(*) FROM t") == 1)
        try impatient.transaction { try impatient.run("INSERT INTO t VALUES (2)") }
        #expect(try first.scalarInt("SELECT count(*) FROM t") == 2)
    }

    @Test("a migration runs once and sets user_version")
    func migrationRunsOnce() throws {
        let path = folder.file("migrate.sqlite")
        let migrations = [
            Migration(
                version: 2, sql: "ALTER TABLE drafts ADD COLUMN body TEXT; CREATE INDEX drafts_title ON drafts(title)"),
            Migration(version: 1, sql: "CREATE TABLE drafts(id TEXT PRIMARY KEY, title TEXT)"),
        ]
        let db = try Database(path: path)
        #expect(try db.schemaVersion() == 0)
        #expect(try db.migrate(migrations) == [1, 2])
        #expect(try db.schemaVersion() == 2)
        #expect(try db.migrate(migrations) == [])
        // Reopened, the schema is where it was left.
        let reopened = try Database(path: path)
        #expect(try reopened.migrate(migrations) == [])
        #expect(try reopened.scalarInt("PRAGMA user_version") == 2)
        try reopened.run("INSERT INTO drafts(id, title, body) VALUES (?, ?, ?)", "d1", "t", "b")
        // A new migration added later runs alone.
        let more = migrations + [Migration(version: 3, sql: "CREATE TABLE notes(x)")]
        #expect(try reopened.migrate(more) == [3])
        #expect(try reopened.schemaVersion() == 3)
    }

    @Test("a fresh schema is made at once in an empty file only; any other file goes through the migrations")
    func freshSchemaOnlyInAnEmptyFile() throws {
        let migrations = [
            Migration(version: 1, sql: "CREATE TABLE drafts(id TEXT PRIMARY KEY, title TEXT)"),
            Migration(version: 2, sql: "ALTER TABLE drafts ADD COLUMN body TEXT"),
        ]
        let fresh = Migration(version: 2, sql: "CREATE TABLE drafts(id TEXT PRIMARY KEY, title TEXT, body TEXT)")
        let empty = try Database(path: folder.file("empty.sqlite"))
        #expect(try empty.migrate(migrations, fresh: fresh) == [2])
        #expect(try empty.schemaVersion() == 2)
        // At version 1, or at version 0 with a table already there: the steps, not the fresh schema.
        let old = try Database(path: folder.file("old.sqlite"))
        #expect(try old.migrate(Array(migrations.prefix(1))) == [1])
        #expect(try old.migrate(migrations, fresh: fresh) == [2])
        let unversioned = try Database(path: folder.file("unversioned.sqlite"))
        try unversioned.execute("CREATE TABLE other(x)")
        #expect(try unversioned.migrate(migrations, fresh: fresh) == [1, 2])
        for db in [empty, old, unversioned] {
            let columns = try db.query("SELECT name FROM pragma_table_info('drafts')") { $0.string(0) }
            #expect(columns == ["id", "title", "body"])
        }
    }

    @Test("a failing migration is rolled back with its version, earlier ones stay")
    func failingMigrationRollsBack() throws {
        let db = try Database(path: folder.file("migrate.sqlite"))
        let broken = [
            Migration(version: 1, sql: "CREATE TABLE a(x)"),
            Migration(version: 2, sql: "CREATE TABLE b(x); INSERT INTO missing VALUES (1)"),
        ]
        let error = try #require(throws: SQLiteError.self) { try db.migrate(broken) }
        #expect(error.message.contains("missing"))
        #expect(try db.schemaVersion() == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'b'") == 0)
        let fixed = [broken[0], Migration(version: 2, sql: "CREATE TABLE b(x)")]
        #expect(try db.migrate(fixed) == [2])
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'b'") == 1)
    }
}
