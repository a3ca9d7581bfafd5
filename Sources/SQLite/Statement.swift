import CSQLite

/// A value SQLite stores.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Int32: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// A prepared statement, finalized in deinit. Belongs to its connection's thread.
public final class Statement {
    let handle: OpaquePointer
    public let sql: String
    private unowned let database: Database

    init(database: Database, sql: String) throws {
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard rc == SQLITE_OK, let handle else {
            throw SQLiteError(code: rc, message: database.lastMessage, sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to its parameters, in order. Every parameter is bound anew (the count
    /// is checked first), so the last use's bindings need no clearing.
    func reset(binding values: [SQLBindable]) throws {
        sqlite3_reset(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw SQLiteError(
                code: SQLITE_RANGE, message: "\(values.count) values for \(expected) parameters", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value.sqlValue {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v):
                // The byte count, not -1: a string with an embedded NUL is stored whole, not cut at the NUL.
                rc = v.withCString {
                    sqlite3_bind_text(handle, index, $0, Int32(v.utf8.count), synclab_sqlite_transient())
                }
            case .blob(let v) where v.isEmpty:
                // Defensive: binding a nil base address stores NULL, not zero bytes, and an empty array promises none.
                rc = sqlite3_bind_zeroblob(handle, index, 0)
            case .blob(let v):
                rc = v.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), synclab_sqlite_transient())
                }
            }
            guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: database.lastMessage, sql: sql) }
        }
    }

    /// Resets the statement, binds `values` to its parameters in order, runs `body` (which steps it) and resets it
    /// again. Text and blobs are laid end to end in one buffer that lives until `body` returns and are bound from it
    /// as they are: SQLite does not allocate and copy each one, which was most of the cost of a multi-row insert.
    func withBindings<T>(_ values: [SQLValue], _ body: () throws -> T) throws -> T {
        sqlite3_reset(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw SQLiteError(
                code: SQLITE_RANGE, message: "\(values.count) values for \(expected) parameters", sql: sql)
        }
        var total = 0
        for value in values {
            switch value {
            case .text(let v): total += v.utf8.count
            case .blob(let v): total += v.count
            case .null, .integer, .real: break
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        for value in values {
            switch value {
            case .text(var v): v.withUTF8 { bytes.append(contentsOf: $0) }
            case .blob(let v): bytes.append(contentsOf: v)
            case .null, .integer, .real: break
            }
        }
        return try bytes.withUnsafeBufferPointer { buffer in
            // Nothing may point into the buffer once it is gone: the bindings are cleared before it is.
            defer {
                sqlite3_reset(handle)
                sqlite3_clear_bindings(handle)
            }
            var position = 0
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                let rc: Int32
                switch value {
                case .null: rc = sqlite3_bind_null(handle, index)
                case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
                case .real(let v): rc = sqlite3_bind_double(handle, index, v)
                case .text(let v):
                    let count = v.utf8.count
                    if count == 0 {
                        // An empty buffer has no address, and a null pointer would store NULL, not "".
                        rc = sqlite3_bind_text(handle, index, "", 0, synclab_sqlite_transient())
                    } else {
                        let start = UnsafeRawPointer(buffer.baseAddress! + position)
                        // SQLITE_STATIC (a nil destructor): the bytes stay put until the bindings are cleared.
                        rc = sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self),
                                               Int32(count), nil)
                    }
                    position += count
                case .blob(let v) where v.isEmpty:
                    rc = sqlite3_bind_zeroblob(handle, index, 0)
                case .blob(let v):
                    rc = sqlite3_bind_blob(handle, index, buffer.baseAddress! + position, Int32(v.count), nil)
                    position += v.count
                }
                guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: database.lastMessage, sql: sql) }
            }
            return try body()
        }
    }

    /// Steps once: true when a row is ready, false when done.
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = database.lastMessage
            sqlite3_reset(handle)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    func finish() { sqlite3_reset(handle) }
}

/// One result row; valid only inside the closure it is handed to.
public struct Row {
    let handle: OpaquePointer

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    public func isNull(_ column: Int) -> Bool { sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL }
    public func int(_ column: Int) -> Int { Int(sqlite3_column_int64(handle, Int32(column))) }
    public func int64(_ column: Int) -> Int64 { sqlite3_column_int64(handle, Int32(column)) }
    public func double(_ column: Int) -> Double { sqlite3_column_double(handle, Int32(column)) }
    public func bool(_ column: Int) -> Bool { sqlite3_column_int64(handle, Int32(column)) != 0 }
    public func string(_ column: Int) -> String {
        guard let text = sqlite3_column_text(handle, Int32(column)) else { return "" }
        // By byte count (read after the text pointer, as SQLite asks), so an embedded NUL does not end the string.
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
    public func optionalString(_ column: Int) -> String? { isNull(column) ? nil : string(column) }
    public func optionalInt(_ column: Int) -> Int? { isNull(column) ? nil : int(column) }
    public func optionalDouble(_ column: Int) -> Double? { isNull(column) ? nil : double(column) }
    public func blob(_ column: Int) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        guard count > 0, let bytes = sqlite3_column_blob(handle, Int32(column)) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }
    public func value(_ column: Int) -> SQLValue {
        switch sqlite3_column_type(handle, Int32(column)) {
        case SQLITE_INTEGER: return .integer(int64(column))
        case SQLITE_FLOAT: return .real(double(column))
        case SQLITE_TEXT: return .text(string(column))
        case SQLITE_BLOB: return .blob(blob(column))
        default: return .null
        }
    }
}
