import Foundation
import LabControl
import LabTestSupport
import PushBroker
import SyncProtocol
import ZeroMQ

extension TestClient.Options {
    /// A DEALER playing a device (or sending raw frames) against a real broker: libzmq's reconnect interval, blocking
    /// sends, the first message taken as the reply.
    static func brokerPeer(routingID: String? = nil, receiveHWM: Int32? = nil) -> Self {
        .init(reconnectMs: nil, sendMode: .blocking, replyMatching: .none, routingID: routingID.map { Array($0.utf8) },
              receiveHWM: receiveHWM)
    }
}

extension TestClient {
    /// The next message, decoded; throws when none comes within `timeout` seconds.
    func receiveOrFail(timeout: Double = 10, line: Int = #line) throws -> Message {
        guard let message = try receive(timeoutMs: Int((timeout * 1_000).rounded(.up))) else {
            throw TestFailure("no reply within \(timeout) s (receive called on line \(line))")
        }
        return message
    }

    /// Registers and returns the broker's answer.
    func register(_ device: String, platform: Platform, token: String, account: String = "acme",
                  line: Int = #line) throws -> Message {
        try send(.register(Register(device: device, account: account, platform: platform, token: token)))
        return try receiveOrFail(line: line)
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
