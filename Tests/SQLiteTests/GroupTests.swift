import Foundation
import LabTestSupport
import SQLite
import Testing

@Suite("Database groups")
struct GroupTests {
    /// This test's folder (each test has an instance of the suite of its own).
    let folder = TempFolder()

    /// A connection with table `t(x)` in a new file, and a second connection that reads what it commits.
    func opened() throws -> (db: Database, reader: Database) {
        let path = folder.file("group.sqlite")
        let db = try Database(path: path, synchronous: .normal)
        try db.execute("CREATE TABLE t(x INTEGER PRIMARY KEY)")
        return (db, try Database(path: path, synchronous: .normal))
    }

    @Test("steps in a group reach another connection only at commitGroup; a failed step is undone alone")
    func groupCommitsOnceAndUndoesAFailedStep() throws {
        let (db, reader) = try opened()

        try db.beginGroup()
        #expect(db.inGroup)
        try db.transaction { try db.run("INSERT INTO t VALUES (1)") }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        try db.transaction { try db.run("INSERT INTO t VALUES (3)") }
        // Nothing is visible outside before the commit.
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 2)
        try db.commitGroup()
        #expect(!db.inGroup)
        var seen: [Int] = []
        try reader.forEach("SELECT x FROM t ORDER BY x", []) { seen.append($0.int(0)) }
        #expect(seen == [1, 3])
        // Outside a group a transaction commits on its own, as before.
        try db.transaction { try db.run("INSERT INTO t VALUES (4)") }
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 3)
    }

    /// A step of a group that has written nothing runs with no savepoint (nothing before it to keep): when it fails,
    /// the group's transaction is rolled back and begun again, so the step is undone and the group goes on. A write
    /// made in the group outside any step (a bare `run`) counts as written: a failing step must not undo it.
    @Test("a failing first step is undone and the group goes on; a bare write before it is kept")
    func aFailingFirstStepIsUndoneAlone() throws {
        let (db, reader) = try opened()
        struct Boom: Error {}

        try db.beginGroup()
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(db.inGroup)
        try db.transaction { try db.run("INSERT INTO t VALUES (2)") }
        try db.commitGroup()
        var seen: [Int] = []
        try reader.forEach("SELECT x FROM t ORDER BY x", []) { seen.append($0.int(0)) }
        #expect(seen == [2])

        try db.beginGroup()
        try db.run("INSERT INTO t VALUES (3)")
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (4)")
                throw Boom()
            }
        }
        try db.commitGroup()
        seen = []
        try reader.forEach("SELECT x FROM t ORDER BY x", []) { seen.append($0.int(0)) }
        #expect(seen == [2, 3])
    }
}
