import Foundation
import LabTestSupport
import SQLite
import Testing

@Suite("Statement")
struct StatementTests {
    /// This test's folder (each test has an instance of the suite of its own).
    let folder = TempFolder()

    @Test("typed values bind and read back as they went in, NULL, blob and unicode included")
    func typedRoundTrip() throws {
        let db = try Database(path: folder.file("types.sqlite"))
        try db.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, i, big, d, s, b, flag, maybe)")
        let unicode = "Grüße, 世界 🌍 — \"quoted\" 'single' \\ back\nslash"
        let blob: [UInt8] = [0, 1, 2, 0, 254, 255]
        let absent: String? = nil
        let insert = "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        try db.run(insert, 1, 42, Int64.max, 3.25, unicode, SQLValue.blob(blob), true, absent)
        try db.run(insert, 2, -7, Int64.min, -0.5, "", SQLValue.blob([]), false, "present")
        try db.run(insert, 3, Int32.max, SQLValue.null, Double.greatestFiniteMagnitude, "nul\0inside", SQLValue.null,
                   false, Optional("x"))

        let rows = try db.query("SELECT i, big, d, s, b, flag, maybe FROM v ORDER BY id") { row in
            (0..<row.columnCount).map { row.value($0) }
        }
        #expect(rows.count == 3)
        #expect(rows[0] == [
            .integer(42), .integer(.max), .real(3.25), .text(unicode), .blob(blob), .integer(1), .null,
        ])
        // An empty string and an empty blob are values, not NULL.
        #expect(rows[1] == [
            .integer(-7), .integer(.min), .real(-0.5), .text(""), .blob([]), .integer(0), .text("present"),
        ])
        // Text is stored by its byte count: an embedded NUL does not cut it.
        #expect(rows[2] == [
            .integer(Int64(Int32.max)), .null, .real(.greatestFiniteMagnitude), .text("nul\0inside"), .null,
            .integer(0), .text("x"),
        ])

        let select = "SELECT i, big, d, s, b, flag, maybe FROM v WHERE id = ?"
        let typed = try #require(try db.first(select, 1) { row in
            (row.int(0), row.int64(1), row.double(2), row.string(3), row.blob(4), row.bool(5), row.optionalString(6),
             row.isNull(6), row.optionalInt(0))
        })
        #expect(typed.0 == 42)
        #expect(typed.1 == Int64.max)
        #expect(typed.2 == 3.25)
        #expect(typed.3 == unicode)
        #expect(typed.4 == blob)
        #expect(typed.5)
        #expect(typed.6 == nil)
        #expect(typed.7)
        #expect(typed.8 == 42)
        #expect(try db.first("SELECT s FROM v WHERE id = 99") { $0.string(0) } == nil)
        #expect(try db.scalarInt("SELECT big FROM v WHERE id = 3") == nil)
        #expect(try db.scalarInt("SELECT length(CAST(s AS BLOB)) FROM v WHERE id = 3") == 10)
        #expect(try db.scalarInt("SELECT length(s) FROM v WHERE id = ?", 1) == unicode.count)
    }

    @Test("values bound from one buffer (run and forEach with values:) store and match what the typed forms do")
    func valuesRoundTrip() throws {
        let db = try Database(path: folder.file("values.sqlite"))
        try db.execute("CREATE TABLE v(id INTEGER PRIMARY KEY, s, b, t, d)")
        let unicode = "Grüße, 世界 🌍 — \"quoted\" \\ back\nslash"
        let rows: [[SQLValue]] = [
            [.integer(1), .text(unicode), .blob([0, 1, 0, 255]), .text(""), .real(2.5)],
            [.integer(2), .text("nul\0inside"), .blob([]), .null, .text(String(repeating: "x", count: 300))],
            [.integer(3), .text("short"), .null, .text("é"), .integer(-9)],
        ]
        // Two rows in one statement, then one: text of several values shares the statement's one buffer.
        let changed = try db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)", values: rows[0] + rows[1])
        #expect(changed == 2)
        try db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?)", values: rows[2])
        var read: [[SQLValue]] = []
        try db.forEach("SELECT id, s, b, t, d FROM v WHERE id IN (?, ?, ?) ORDER BY id",
                       values: [.integer(3), .integer(1), .integer(2)]) { row in
            read.append((0..<row.columnCount).map { row.value($0) })
        }
        #expect(read == rows)
        // The statement is reusable afterwards, and a wrong count is still refused before anything runs.
        #expect(try db.scalarInt("SELECT length(CAST(s AS BLOB)) FROM v WHERE id = 2") == 10)
        #expect(throws: SQLiteError.self) { try db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?)", values: [.integer(4)]) }
        #expect(try db.scalarInt("SELECT count(*) FROM v") == 3)
    }

    @Test("an SQL error carries the result code, SQLite's message and the SQL")
    func errorsCarryCodeMessageAndSQL() throws {
        let db = try Database(path: folder.file("errors.sqlite"))

        let missing = "INSERT INTO missing VALUES (1)"
        let prepare = try #require(throws: SQLiteError.self) { try db.run(missing) }
        #expect(prepare.code == ResultCode.error)
        #expect(prepare.message == "no such table: missing")
        #expect(prepare.sql == missing)
        #expect(prepare.description.contains("no such table: missing"))
        #expect(prepare.description.contains(missing))

        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        let insert = "INSERT INTO t(id, name) VALUES (?, ?)"
        try db.run(insert, 1, "one")
        let step = try #require(throws: SQLiteError.self) { try db.run(insert, 1, "again") }
        // Extended codes are on: a primary key violation, not only "constraint".
        #expect(step.code == ResultCode.constraintPrimaryKey)
        #expect(step.code & 0xff == ResultCode.constraint)
        #expect(step.message == "UNIQUE constraint failed: t.id")
        #expect(step.sql == insert)
        #expect(!step.isBusy)

        let arity = try #require(throws: SQLiteError.self) { try db.run(insert, 2) }
        #expect(arity.code == ResultCode.range)
        #expect(arity.message == "1 values for 2 parameters")

        let script = try #require(throws: SQLiteError.self) { try db.execute("CREATE TABLE t(x)") }
        #expect(script.message == "table t already exists")
        #expect(script.sql == "CREATE TABLE t(x)")

        // After each failure the statement and connection still work.
        try db.run(insert, 2, "two")
        #expect(try db.query("SELECT name FROM t ORDER BY id") { $0.string(0) } == ["one", "two"])
    }

    @Test("statements are prepared once and reused from the cache")
    func statementCacheReuse() throws {
        let db = try Database(path: folder.file("cache.sqlite"))
        try db.execute("CREATE TABLE t(x INTEGER)")
        let insert = "INSERT INTO t VALUES (?)"
        let statement = try db.statement(insert)
        #expect(try db.statement(insert) === statement)
        #expect(statement.sql == insert)
        #expect(try db.statement("SELECT x FROM t") !== statement)
        try db.transaction {
            for value in 0..<1_000 { try db.run(insert, value) }
        }
        #expect(try db.statement(insert) === statement)
        #expect(db.changes == 1)
        #expect(db.lastInsertRowID == 1_000)
        var sum = 0
        try db.forEach("SELECT x FROM t WHERE x >= ?", 500) { sum += $0.int(0) }
        #expect(sum == (500..<1_000).reduce(0, +))
        // A statement cut off mid-iteration by an error is reset for its next use.
        struct Stop: Error {}
        #expect(throws: Stop.self) { try db.forEach("SELECT x FROM t") { _ in throw Stop() } }
        #expect(try db.query("SELECT x FROM t WHERE x < ?", 3) { $0.int(0) } == [0, 1, 2])
        #expect(try db.run("DELETE FROM t WHERE x < ?", 10) == 10)
    }

    /// The table in front of the cache finds a statement by where its text's bytes are: a text built anew each time
    /// (whose bytes the allocator puts where the last one's were) must still get its own statement, and an equal text
    /// elsewhere the same one.
    @Test("a statement is found by its text, never by where its bytes happen to lie")
    func statementFoundByText() throws {
        let db = try Database(path: folder.file("texts.sqlite"))
        try db.execute("CREATE TABLE t(x INTEGER)")
        try db.run("INSERT INTO t VALUES (7)")
        for n in 0..<300 {
            let sql = "SELECT x + \(n) FROM t"
            let statement = try db.statement(sql)
            #expect(statement.sql == sql)
            #expect(try db.scalarInt(sql) == 7 + n)
        }
        let literal = try db.statement("SELECT x FROM t")
        let built = try db.statement(["SELECT", "x", "FROM", "t"].joined(separator: " "))
        #expect(built === literal, "an equal text elsewhere in memory is the same statement")
    }
}
