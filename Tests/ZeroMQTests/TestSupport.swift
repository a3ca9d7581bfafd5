import Foundation
import ZeroMQ

/// A fresh temporary folder, removed when the test is done with it.
struct TemporaryFolder: ~Copyable {
    let path: String

    init() throws {
        // Short: an ipc:// path must fit in a Unix socket address (107 bytes).
        let path = "/tmp/zmqt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        self.path = path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A value written by one thread and read by another.
final class Box<Value: Sendable>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension Socket {
    /// Receives with a bound wait, so a lost message fails the test instead of hanging it.
    func receive(within timeoutMs: Int32) throws -> [Frame]? {
        try setReceiveTimeout(ms: timeoutMs)
        return try receive()
    }
}

func bytes(_ text: String) -> Frame { Array(text.utf8) }
func text(_ frame: Frame) -> String { String(decoding: frame, as: UTF8.self) }
