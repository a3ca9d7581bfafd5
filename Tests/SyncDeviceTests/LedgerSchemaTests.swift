import Foundation
import LabKit
import LabTestSupport
import SQLite
import SyncProtocol
import Testing
@testable import SyncDevice

/// A new ledger is made from `Ledger.schema` at once; an old one goes through `Ledger.migrations`. Both must end at
/// the same schema, and an old file must keep its rows.
@Suite struct LedgerSchemaTests {
    let folder = TempFolder()

    /// Everything a schema is made of, in a form two files can be compared by: each table's columns (name, type, not
    /// null, default, key) and whether it has a rowid, each index's table, columns, uniqueness, origin and condition,
    /// and the `state` rows a new ledger starts with.
    static func shape(of database: Database) throws -> [String] {
        var shape: [String] = []
        let tables = try database.query("""
            SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
            """) { ($0.string(0), $0.string(1)) }
        for (table, sql) in tables {
            shape.append("table \(table) rowid \(!sql.hasSuffix("WITHOUT ROWID"))")
            let columnsSQL = "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)"
            try database.forEach(columnsSQL, [table]) { column in
                let notNull = column.int(2), key = column.int(4), byDefault = column.optionalString(3) ?? "-"
                shape.append("  column \(column.string(0)) \(column.string(1)) \(notNull) \(byDefault) \(key)")
            }
            let indexes = try database.query("""
                SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY origin, name
                """, table) { ($0.string(0), $0.int(1), $0.string(2), $0.int(3)) }
            for (name, unique, origin, partial) in indexes {
                let columns = try database.query("SELECT name FROM pragma_index_info(?) ORDER BY seqno", name) {
                    $0.optionalString(0) ?? "-"
                }
                let condition = try database.first("SELECT sql FROM sqlite_master WHERE name = ?", name) {
                    $0.optionalString(0)
                } ?? nil
                // An automatic index's name follows the table's name when it was made, not a rename after.
                let shown = name.hasPrefix("sqlite_autoindex") ? "(automatic)" : name
                shape.append("  index \(shown) \(columns) unique \(unique) \(origin) partial \(partial) "
                    + (condition ?? ""))
            }
        }
        shape += try database.query("SELECT key, value FROM state ORDER BY key") {
            "state \($0.string(0)) \($0.string(1))"
        }
        return shape
    }

    @Test func aNewLedgersSchemaIsTheMigratedOne() throws {
        let fresh = try Ledger(path: folder.file("fresh.sqlite"))
        let migrated = try Database(path: folder.file("migrated.sqlite"), synchronous: .normal)
        #expect(try migrated.migrate(Ledger.migrations) == Ledger.migrations.map(\.version))
        #expect(try fresh.database.schemaVersion() == Ledger.schema.version)
        #expect(Ledger.schema.version == Ledger.migrations.map(\.version).max())
        let freshShape = try Self.shape(of: fresh.database), migratedShape = try Self.shape(of: migrated)
        #expect(freshShape == migratedShape)
        #expect(freshShape.contains("table shadow rowid false"))
    }

    /// Schema 4 makes `shadow`, `drafts` and `state` WITHOUT ROWID tables: a ledger made before keeps every row.
    @Test func aLedgerOfSchemaThreeKeepsItsRowsInSchemaFour() throws {
        let path = folder.file("old.sqlite")
        do {
            let old = try Database(path: path, synchronous: .normal, pageSize: Ledger.pageSize)
            _ = try old.migrate(Ledger.migrations.filter { $0.version <= 3 })
            try old.execute("""
                INSERT INTO shadow VALUES ('d', 'server', 'b', 2, 0);
                INSERT INTO drafts VALUES ('d', 'mine', 'b', 3, 0), ('e', 'gone', NULL, 1, 1);
                UPDATE state SET value = 2 WHERE key IN ('cursor', 'head');
                """)
        }
        let ledger = try Ledger(path: path)
        #expect(try ledger.database.schemaVersion() == 4)
        #expect(try Self.shape(of: ledger.database).contains("table drafts rowid false"))
        #expect(try ledger.drafts() == [DraftRow(id: "d", title: "mine", body: "b", version: 3, deleted: false),
                                        DraftRow(id: "e", title: "gone", body: nil, version: 1, deleted: true)])
        #expect(try ledger.cursor() == 2)
        // The shadow row is there for the next page: an update keeps the body it does not carry.
        let identity = DeviceIdentity(device: "pixel", account: "acme", token: "t", platform: .android)
        _ = try ledger.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                               settings: DeviceSettings(), now: 0)
        let change = Change(seq: 3, draft: "d", action: .update, version: 3, title: "t3", body: nil, origin: "other",
                            key: "k", conflict: false)
        _ = try ledger.apply(PageApplication(changes: [change], from: 2, to: 3, pass: 1), wall: 1)
        #expect(try ledger.drafts().first == DraftRow(id: "d", title: "t3", body: "b", version: 3, deleted: false))
        #expect(try ledger.database.integrityCheck() == "ok")
    }
}
