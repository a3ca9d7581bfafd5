import Foundation
import LabTestSupport
import LabKit
import SyncProtocol
import ZeroMQ

/// A device-side DEALER with timeouts, speaking the wire protocol.
final class TestClient {
    let context: Context
    let endpoint: String
    private(set) var socket: Socket
    private var nextReq = 0

    init(_ context: Context, endpoint: String) throws {
        self.context = context
        self.endpoint = endpoint
        socket = try TestClient.connect(context, endpoint)
    }

    private static func connect(_ context: Context, _ endpoint: String) throws -> Socket {
        let socket = try Socket(context, .dealer)
        try socket.setReconnectInterval(ms: 10)
        try socket.connect(endpoint)
        return socket
    }

    /// A new connection (a new routing id: the server sees a new peer that must say hello again).
    func reconnect() throws {
        socket.close()
        socket = try TestClient.connect(context, endpoint)
    }

    func req() -> Int {
        nextReq += 1
        return nextReq
    }

    func send(_ message: Message) throws { try socket.send(Codec.encode(message)) }
    func sendRaw(_ frames: [[UInt8]]) throws { try socket.send(frames) }

    /// The next message within `timeoutMs`, decoded; nil on timeout.
    func receive(timeoutMs: Int) throws -> Message? {
        try socket.receive(timeoutMs: timeoutMs).map { try Codec.decode($0) }
    }

    /// The next message's frames as they came, within `timeoutMs`; nil on timeout.
    func receiveFrames(timeoutMs: Int) throws -> [[UInt8]]? {
        try socket.receive(timeoutMs: timeoutMs)
    }

    /// Sends and waits for the reply (skipping replies to other requests), nil on timeout.
    func request(_ message: Message, timeoutMs: Int = 5_000) throws -> Message? {
        try send(message)
        let wanted = TestClient.req(of: message)
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        while SimClock.monotonicNanos() < deadline {
            let left = Int((deadline - SimClock.monotonicNanos()) / 1_000_000)
            guard let reply = try receive(timeoutMs: max(left, 1)) else { return nil }
            if wanted == nil || TestClient.req(of: reply) == wanted || TestClient.req(of: reply) == nil {
                return reply
            }
        }
        return nil
    }

    static func req(of message: Message) -> Int? {
        switch message {
        case .push(let m): return m.req
        case .pushResult(let m): return m.req
        case .pull(let m): return m.req
        case .page(let m): return m.req
        case .control(let m): return m.req
        case .controlAck(let m): return m.req
        case .error(let m): return m.req
        case .hello, .welcome, .notice, .register, .registered, .deviceState, .hint: return nil
        }
    }

    func hello(_ device: String, _ account: String, _ token: String, _ platform: Platform = .android,
               timeoutMs: Int = 5_000) throws -> Message?
    {
        try request(.hello(Hello(device: device, account: account, token: token, platform: platform)),
                    timeoutMs: timeoutMs)
    }

    func push(_ ops: [Op], timeoutMs: Int = 5_000) throws -> Message? {
        try request(.push(Push(req: req(), ops: ops)), timeoutMs: timeoutMs)
    }

    func pull(cursor: Int, limit: Int = 100, account: String? = nil, timeoutMs: Int = 5_000) throws -> Message? {
        try request(.pull(Pull(req: req(), cursor: cursor, limit: limit, account: account)), timeoutMs: timeoutMs)
    }
}
