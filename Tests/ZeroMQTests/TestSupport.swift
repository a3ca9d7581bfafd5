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

extension Socket {
    /// Receives with a bound wait, so a lost message fails the test instead of hanging it.
    func receive(within timeoutMs: Int32) throws -> [Frame]? {
        try setReceiveTimeout(ms: timeoutMs)
        return try receive()
    }
}

func bytes(_ text: String) -> Frame { Array(text.utf8) }
func text(_ frame: Frame) -> String { String(decoding: frame, as: UTF8.self) }
