import Foundation
import LabControl
import LabKit
import LabTestSupport
import SyncProtocol
import ZeroMQ

/// The lab's control client on a test's process (it keeps the ack of `stop`: `liveOnly: false`).
func controlClient(_ context: Context, endpoint: String) throws -> ControlClient {
    try ControlClient(context: context, endpoint: endpoint, liveOnly: false)
}

/// Starts `synclab-device` with `arguments`, its output in `log`, and waits until `control` answers `ping`; `who`
/// names the process in the failure.
func startDevice(_ arguments: [String], log: String, control: ControlClient, who: String) throws -> ChildProcess {
    let child = try ChildProcess(Binaries.path("synclab-device"), arguments, log: log)
    guard control.isReady() else { throw TestFailure.setup("\(who) did not answer ping: \(child.log)") }
    return child
}

extension ControlClient {
    /// The ack's data (an empty object when it has none), or nil when no ack came.
    func data(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = 5_000) throws -> JSONValue? {
        try ack(command, args, timeoutMs: timeoutMs).map { $0.data ?? .object([]) }
    }
}

/// Raw frames to a control socket (malformed-input tests): the first reply, decoded; nil when none came.
func rawControl(_ context: Context, endpoint: String, _ frames: [[UInt8]], timeoutMs: Int = 3_000) throws -> Message? {
    let socket = try Socket(context, .dealer)
    defer { socket.close() }
    try socket.connect(endpoint)
    let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1_000)
    while try !socket.send(frames, dontWait: true) {
        guard Date() < deadline else { return nil }
        usleep(5_000)
    }
    var poller = Poller([socket])
    while Date() < deadline {
        guard try !poller.poll(timeoutMs: 50).isEmpty, let reply = try socket.receive(dontWait: true) else { continue }
        return try? Codec.decode(reply)
    }
    return nil
}

/// Reads an events file.
func readEvents(_ path: String) -> [JSONValue] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
}

/// Counts events of one type in a growing events file, reading only what was appended since the last look.
final class EventCounter {
    let path: String
    let needle: [UInt8]
    private var offset: UInt64 = 0
    private(set) var count = 0
    private var carry: [UInt8] = []

    init(path: String, type: String) {
        self.path = path
        needle = Array("\"type\":\"\(type)\"".utf8)
    }

    /// Reads what was appended and returns the total count so far.
    @discardableResult
    func update() -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return count }
        defer { try? handle.close() }
        handle.seek(toFileOffset: offset)
        let data = handle.readDataToEndOfFile()
        offset += UInt64(data.count)
        var bytes = carry + [UInt8](data)
        // Keep an unfinished line for the next look.
        if let lastNewline = bytes.lastIndex(of: 0x0A) {
            carry = Array(bytes[(lastNewline + 1)...])
            bytes = Array(bytes[...lastNewline])
        } else {
            carry = bytes
            return count
        }
        for line in bytes.split(separator: 0x0A) where line.count >= needle.count {
            let array = Array(line)
            for start in 0...(array.count - needle.count) where array[start] == needle[0] {
                if Array(array[start..<(start + needle.count)]) == needle {
                    count += 1
                    break
                }
            }
        }
        return count
    }
}
