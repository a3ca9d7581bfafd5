import Foundation
import LabTestSupport
import SQLite
import Testing

@Suite("Database groups")
struct GroupTests {
    @Test("steps in a group reach another connection only at commitGroup; a failed step is undone alone")
    func groupCommitsOnceAndUndoesAFailedStep() throws {
        let folder = TempFolder()
        let path = folder.file("group.sqlite")
        let db = try Database(path: path, synchronous: .normal)
        try db.execute("CREATE TABLE t(x INTEGER PRIMARY KEY)")
        let reader = try Database(path: path, synchronous: .normal)

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
}
