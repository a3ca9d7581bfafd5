import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// Sends control commands to a process's control ROUTER and waits (bounded) for the matching answer.
final class Controller {
    let socket: Socket
    private var nextReq = 1

    init(_ context: Context, endpoint: String) throws {
        socket = try Socket(context, .dealer)
        try socket.setReconnectInterval(ms: 20)
        try socket.connect(endpoint)
    }

    enum Answer {
        case ack(ControlAck)
        case error(ErrorReply)
        case none
    }

    /// Sends raw frames (for malformed-input tests) and returns the first reply.
    func raw(_ frames: [[UInt8]], timeoutMs: Int = 3_000) throws -> Message? {
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1_000)
        while try !socket.send(frames, dontWait: true) {
            guard Date() < deadline else { return nil }
            usleep(5_000)
        }
        var poller = Poller([socket])
        while Date() < deadline {
            guard try !poller.poll(timeoutMs: 50).isEmpty, let reply = try socket.receive(dontWait: true) else {
                continue
            }
            return try? Codec.decode(reply)
        }
        return nil
    }

    func call(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = 5_000) throws -> Answer {
        let req = nextReq
        nextReq += 1
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1_000)
        let frames = Codec.encode(.control(Control(req: req, command: command, args: args)))
        while try !socket.send(frames, dontWait: true) {
            guard Date() < deadline else { return .none }
            usleep(5_000)
        }
        var poller = Poller([socket])
        while Date() < deadline {
            guard try !poller.poll(timeoutMs: 50).isEmpty else { continue }
            while let reply = try socket.receive(dontWait: true) {
                switch try? Codec.decode(reply) {
                case .controlAck(let ack) where ack.req == req: return .ack(ack)
                case .error(let error) where error.req == req: return .error(error)
                default: continue
                }
            }
        }
        return .none
    }

    /// The ack's data, or nil when the command was refused or not answered.
    func data(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = 5_000) throws -> JSONValue? {
        if case .ack(let ack) = try call(command, args, timeoutMs: timeoutMs) { return ack.data ?? .object([]) }
        return nil
    }

    /// Pings until the process answers (it is serving) or the limit passes.
    func waitReady(limit: Double = 20) throws -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline {
            if case .ack = try call("ping", timeoutMs: 250) { return true }
        }
        return false
    }
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
