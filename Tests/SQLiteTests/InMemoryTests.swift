import LabTestSupport
import Foundation
import SQLite
import Testing

@Suite("In-memory databases")
struct InMemoryTests {
    /// A name no other test of this process uses (in-memory databases are shared by name across the process).
    static func name(_ label: String) -> String { "sqlite-tests/\(label)-\(UUID().uuidString)" }

    @Test("connections on one in-memory name share the database while one of them is open, and only then")
    func sharedWhileOneIsOpen() throws {
        let path = Database.inMemory(name: Self.name("shared"))
        #expect(Database.isInMemory(path))
        let keeper = try Database(path: path)
        #expect(try keeper.journalMode() == "memory")
        do {
            let first = try Database(path: path)
            try first.execute("CREATE TABLE t(x)")
            try first.transaction { try first.run("INSERT INTO t VALUES (1)") }
        }
        // The connection that wrote is closed (a killed process); a new one sees what it committed.
        let second = try Database(path: path)
        #expect(try second.scalarInt("SELECT count(*) FROM t") == 1)
        // What a connection had not committed when it closed is gone.
        do {
            let third = try Database(path: path)
            try third.beginGroup()
            try third.run("INSERT INTO t VALUES (2)")
        }
        #expect(try second.scalarInt("SELECT count(*) FROM t") == 1)
        // Another name is another database, and no file is made for either.
        let other = try Database(path: Database.inMemory(name: Self.name("other")))
        #expect(throws: SQLiteError.self) { try other.scalarInt("SELECT count(*) FROM t") }
        #expect(!FileManager.default.fileExists(atPath: "/sqlite-tests"))
        _ = keeper
    }

    @Test("once the last connection closes, the in-memory database is gone")
    func goneWithTheLastConnection() throws {
        let path = Database.inMemory(name: Self.name("gone"))
        do {
            let only = try Database(path: path)
            try only.execute("CREATE TABLE t(x)")
        }
        let fresh = try Database(path: path)
        #expect(throws: SQLiteError.self) { try fresh.scalarInt("SELECT count(*) FROM t") }
    }

    @Test("an in-memory database written to a file is read back as a file, in WAL mode once opened")
    func writtenToAFile() throws {
        let folder = TempFolder()
        let path = Database.inMemory(name: Self.name("written"))
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t(x TEXT)")
        try db.transaction {
            for n in 0..<100 { try db.run("INSERT INTO t VALUES (?)", "row \(n)") }
        }
        // A name with the characters a URI would read otherwise.
        let file = folder.file("dev?ice#1%.sqlite")
        try db.write(to: file)
        // Marked WAL, as a cleanly closed database of the lab's is; no -wal beside it.
        let bytes = try #require(FileManager.default.contents(atPath: file))
        #expect(bytes.count > 100 && bytes[18] == 2 && bytes[19] == 2)
        #expect(!FileManager.default.fileExists(atPath: file + "-wal"))
        // An existing file is not overwritten.
        #expect(throws: SQLiteError.self) { try db.write(to: file) }
        let copy = try Database(path: file, synchronous: .normal)
        #expect(try copy.journalMode() == "wal")
        #expect(try copy.scalarInt("SELECT count(*) FROM t") == 100)
        #expect(try copy.integrityCheck() == "ok")
        // A file database writes its copy to a plain path.
        let again = folder.file("again.sqlite")
        try copy.write(to: again)
        #expect(try Database(path: again).scalarInt("SELECT count(*) FROM t WHERE x = 'row 99'") == 1)
    }

    @Test("a path that is not the in-memory form is a file, even one that begins with file:")
    func otherPathsAreFiles() throws {
        #expect(!Database.isInMemory("/tmp/x.sqlite"))
        #expect(!Database.isInMemory("file:/tmp/x.sqlite"))
        let folder = TempFolder()
        let db = try Database(path: folder.file("plain.sqlite"))
        #expect(try db.journalMode() == "wal")
    }
}
