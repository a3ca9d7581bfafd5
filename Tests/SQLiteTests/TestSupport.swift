import Foundation

/// SQLite's result codes the tests check (from sqlite3.h; extended codes are on in every connection).
enum ResultCode {
    static let error: Int32 = 1
    static let busy: Int32 = 5
    static let constraint: Int32 = 19
    static let range: Int32 = 25
    static let constraintPrimaryKey: Int32 = 1555
}
