import Foundation

/// A fresh temporary folder holding a test's database files, removed when the test is done with it.
struct TemporaryFolder: ~Copyable {
    let path: String

    init() throws {
        let path = NSTemporaryDirectory() + "sqlite-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        self.path = path
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// SQLite's result codes the tests check (from sqlite3.h; extended codes are on in every connection).
enum ResultCode {
    static let error: Int32 = 1
    static let busy: Int32 = 5
    static let constraint: Int32 = 19
    static let range: Int32 = 25
    static let constraintPrimaryKey: Int32 = 1555
}
