import Foundation
import LabControl
import LabTestSupport
import PushBroker
import SyncProtocol
import ZeroMQ

/// A DEALER playing a device (or sending raw frames) against a real broker: sends messages, receives with a timeout.
final class TestPeer {
    let socket: Socket

    init(_ context: Context, connect endpoint: String, routingID: String? = nil, receiveHWM: Int32? = nil) throws {
        socket = try Socket(context, .dealer)
        if let routingID { try socket.setRoutingID(Array(routingID.utf8)) }
        if let receiveHWM { try socket.setReceiveHighWaterMark(receiveHWM) }
        try socket.connect(endpoint)
    }

    func send(_ message: Message) throws {
        try socket.send(Codec.encode(message))
    }

    func sendRaw(_ frames: [[UInt8]]) throws {
        try socket.send(frames)
    }

    /// The next message's frames, or nil after `timeout` seconds.
    func receiveFrames(timeout: Double) throws -> [[UInt8]]? {
        var poller = Poller([socket])
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let frames = try socket.receive(dontWait: true) { return frames }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            _ = try poller.poll(timeoutMs: Int((left * 1000).rounded(.up)))
        }
    }

    /// The next message, decoded; throws when none comes within `timeout` seconds.
    func receive(timeout: Double = 10, line: Int = #line) throws -> Message {
        guard let frames = try receiveFrames(timeout: timeout) else {
            throw TestFailure("no reply within \(timeout) s (receive called on line \(line))")
        }
        return try Codec.decode(frames)
    }

    /// Registers and returns the broker's answer.
    func register(_ device: String, platform: Platform, token: String, account: String = "acme",
                  line: Int = #line) throws -> Message {
        try send(.register(Register(device: device, account: account, platform: platform, token: token)))
        return try receive(line: line)
    }
}

extension ControlClient {
    /// The broker's counters from `stats`.
    func stats() throws -> (hints: HintCounters, data: JSONValue) {
        let ack = try call("stats", timeoutMs: 10_000)
        guard let data = ack.data, let hints = data["hints"].flatMap(HintCounters.init) else {
            throw TestFailure("stats without counters: \(ack)")
        }
        return (hints, data)
    }
}
