import CSQLite

/// A failed SQLite call: the result code, SQLite's own message, and the SQL or file it was about.
public struct SQLiteError: Error, CustomStringConvertible, Sendable, Equatable {
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Another connection holds the lock and the busy timeout ran out.
    public var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }

    public var description: String {
        let name = String(cString: sqlite3_errstr(code))
        if let sql {
            return "sqlite \(name) (\(code)): \(message) — in: \(sql)"
        }
        return "sqlite \(name) (\(code)): \(message)"
    }
}
