import Foundation
import ZeroMQ

extension Socket {
    /// Receives with a bound wait, so a lost message fails the test instead of hanging it.
    func receive(within timeoutMs: Int32) throws -> [Frame]? {
        try setReceiveTimeout(ms: timeoutMs)
        return try receive()
    }
}

func bytes(_ text: String) -> Frame { Array(text.utf8) }
func text(_ frame: Frame) -> String { String(decoding: frame, as: UTF8.self) }
