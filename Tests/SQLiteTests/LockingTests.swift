import Foundation
import LabTestSupport
import SQLite
import Testing

/// `Database(locking: .exclusive)`, what a pool's ledgers open with: the file is the connection's alone, its
/// wal-index lives in the heap (no `-shm` file), and what it committed survives its process's death.
@Suite("Locking")
struct LockingTests {
    let folder = TempFolder()

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// A connection to a new file at `path` whose table `t` holds one row.
    func oneRowTable(_ path: String, locking: Locking) throws -> Database {
        let database = try Database(path: path, locking: locking)
        try database.execute("CREATE TABLE t(x)")
        try database.run("INSERT INTO t VALUES (1)")
        return database
    }

    @Test("exclusive: no other connection reads or writes while it is open, and no -shm file is made")
    func exclusiveKeepsOthersOut() throws {
        let path = folder.file("exclusive.sqlite")
        var first: Database? = try oneRowTable(path, locking: .exclusive)
        #expect(try first?.lockingMode() == "exclusive")
        #expect(try first?.journalMode() == "wal")
        #expect(!exists(path + "-shm"))
        let refused = try #require(throws: SQLiteError.self) { try Database(path: path, busyTimeoutMs: 50) }
        #expect(refused.isBusy, "\(refused)")
        // Its own connection goes on reading and writing.
        try first?.run("INSERT INTO t VALUES (2)")
        #expect(try first?.scalarInt("SELECT count(*) FROM t") == 2)
        first = nil
        let after = try Database(path: path, busyTimeoutMs: 50)
        #expect(try after.scalarInt("SELECT count(*) FROM t") == 2)
        #expect(try after.lockingMode() == "normal")
    }

    @Test("normal: a second connection reads beside the first (what a single device's status --db relies on)")
    func normalLetsOthersRead() throws {
        let path = folder.file("normal.sqlite")
        let first = try oneRowTable(path, locking: .normal)
        let second = try Database(path: path, busyTimeoutMs: 50)
        #expect(try second.scalarInt("SELECT count(*) FROM t") == 1)
        #expect(try first.lockingMode() == "normal")
    }

    /// The files as a SIGKILL leaves them: committed frames in the WAL, never checkpointed, no `-shm`, the last
    /// transaction open. Copying them while the connection still holds them is that state byte for byte (the locks
    /// are advisory; a kill drops them). `LedgerLockTests` kills a real pool for the same check.
    @Test("a file written in exclusive mode and abandoned opens again with every committed row and no other")
    func abandonedExclusiveFileRecovers() throws {
        let path = folder.file("abandoned.sqlite")
        let writer = try Database(path: path, synchronous: .normal, pageSize: 1_024, locking: .exclusive)
        try writer.execute("CREATE TABLE t(x INTEGER PRIMARY KEY, body TEXT)")
        for n in 1...200 {
            try writer.transaction { try writer.run("INSERT INTO t VALUES (?, ?)", n, "row \(n)") }
        }
        // Written through the gathering VFS, so the copies below read what its commits handed the kernel.
        #expect(try #require(writer.walWrites).made >= 200)
        try writer.beginGroup()
        try writer.run("INSERT INTO t VALUES (?, ?)", 201, "never committed")
        // What the kill leaves: the WAL holds the commits (no checkpoint ran: a WAL under 1,000 pages), no -shm.
        #expect(!exists(path + "-shm"))
        #expect(size(path + "-wal") > 200 * 1_024)
        // Opened again as a restarted pool opens it (exclusive: the index is rebuilt from the WAL in the heap) and
        // as the launcher reads it after a kill (normal), each from a copy of its own.
        for locking in [Locking.exclusive, .normal] {
            let copy = folder.file("copy-\(locking).sqlite")
            for suffix in ["", "-wal"] {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
            let reopened = try Database(path: copy, synchronous: .normal, locking: locking)
            #expect(try reopened.scalarInt("SELECT count(*) FROM t") == 200, "\(locking)")
            #expect(try reopened.scalarInt("SELECT max(x) FROM t") == 200, "\(locking)")
            #expect(try reopened.first("SELECT body FROM t WHERE x = 137") { $0.string(0) } == "row 137")
            #expect(try reopened.integrityCheck() == "ok", "\(locking)")
        }
        try writer.rollbackGroup()
    }

    @Test("exclusive: a commit's WAL frames reach the file as one write; a normal connection's are not gathered")
    func commitIsOneWrite() throws {
        let writer = try Database(path: folder.file("gathered.sqlite"), synchronous: .normal, pageSize: 1_024,
                                  locking: .exclusive)
        try writer.execute("CREATE TABLE a(x INTEGER PRIMARY KEY, body TEXT); CREATE TABLE b(y TEXT PRIMARY KEY)")
        let before = try #require(writer.walWrites)
        for n in 1...50 {
            try writer.transaction {
                try writer.run("INSERT INTO a VALUES (?, ?)", n, String(repeating: "x", count: 300))
                try writer.run("INSERT INTO b VALUES (?)", "key \(n)")
            }
        }
        let after = try #require(writer.walWrites)
        // Two pages a commit at the least (a and b), each a frame header and a page: four writes asked, one made.
        #expect(after.asked - before.asked >= 4 * 50)
        #expect(after.made - before.made == 50)
        #expect(try writer.scalarInt("SELECT count(*) FROM a") == 50)
        let normal = try Database(path: folder.file("plain.sqlite"), locking: .normal)
        try normal.execute("CREATE TABLE t(x)")
        #expect(normal.walWrites == nil)
    }

    /// A transaction larger than the page cache spills frames into the WAL before its commit and reads them back:
    /// every read of the WAL first writes what is gathered.
    @Test("exclusive: a transaction that spills past the page cache reads its own frames back, then recovers whole")
    func spilledTransaction() throws {
        let path = folder.file("spilled.sqlite")
        let writer = try Database(path: path, synchronous: .normal, pageSize: 1_024, locking: .exclusive)
        try writer.execute("PRAGMA cache_size=50; CREATE TABLE t(x INTEGER PRIMARY KEY, body TEXT)")
        try writer.transaction {
            for n in 1...3_000 { try writer.run("INSERT INTO t VALUES (?, ?)", n, "row \(n) " + String(n * 7)) }
            // Pages spilled out of the 50-page cache are read back from the WAL within the transaction.
            for n in stride(from: 1, through: 3_000, by: 97) {
                #expect(try writer.first("SELECT body FROM t WHERE x = ?", n) { $0.string(0) }
                        == "row \(n) " + String(n * 7))
            }
            try writer.run("UPDATE t SET body = 'changed' WHERE x % 10 = 0")
        }
        #expect(try writer.integrityCheck() == "ok")
        let copy = folder.file("spilled-copy.sqlite")
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix) }
        let reopened = try Database(path: copy, synchronous: .normal)
        #expect(try reopened.scalarInt("SELECT count(*) FROM t") == 3_000)
        #expect(try reopened.scalarInt("SELECT count(*) FROM t WHERE body = 'changed'") == 300)
        #expect(try reopened.integrityCheck() == "ok")
    }
}
