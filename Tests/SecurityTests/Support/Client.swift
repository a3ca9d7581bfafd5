import Foundation
import LabTestSupport
import LabKit
import SyncProtocol
import ZeroMQ

/// A DEALER speaking the wire protocol with bounded waits: the attacker (or a legitimate peer) of a test.
final class Client {
    let socket: Socket
    private var nextReq = 0

    init(_ context: Context, _ endpoint: String, pair: CurveKeyPair?, serverKey: String?, routingID: [UInt8]? = nil,
         receiveHWM: Int32? = nil) throws {
        socket = try Socket(context, .dealer)
        try socket.setReconnectInterval(ms: 20)
        if let pair, let serverKey { try socket.setCurveClient(pair, serverKey: serverKey) }
        if let routingID { try socket.setRoutingID(routingID) }
        if let receiveHWM {
            try socket.setReceiveHighWaterMark(receiveHWM)
            try socket.setOption(ZMQ_RCVBUF_OPTION, 4096)
        }
        try socket.connect(endpoint)
    }

    deinit { socket.close() }

    func req() -> Int {
        nextReq += 1
        return nextReq
    }

    /// Sends without blocking for long: a message a CURVE server never admitted stays queued or is dropped, either
    /// way nothing reaches the server.
    func send(_ message: Message) throws { _ = try socket.send(Codec.encode(message), dontWait: true) }
    func sendRaw(_ frames: [[UInt8]]) throws { _ = try socket.send(frames, dontWait: true) }

    /// The next message's frames within `timeoutMs`; nil when nothing came.
    func receiveFrames(timeoutMs: Int) throws -> [[UInt8]]? {
        try socket.receive(timeoutMs: timeoutMs)
    }

    func receive(timeoutMs: Int) throws -> Message? {
        try receiveFrames(timeoutMs: timeoutMs).map { try Codec.decode($0) }
    }

    /// Sends and waits for a reply; nil when none came within `timeoutMs`.
    func request(_ message: Message, timeoutMs: Int = 5_000) throws -> Message? {
        try send(message)
        return try receive(timeoutMs: timeoutMs)
    }

    func hello(_ device: String, _ account: String, token: String? = nil, timeoutMs: Int = 5_000) throws -> Message? {
        let platform = SecureLab.devices.first { $0.id == device }?.platform ?? .android
        return try request(.hello(Hello(device: device, account: account, token: token ?? SecureLab.token(device),
                                        platform: platform)), timeoutMs: timeoutMs)
    }

    func pull(cursor: Int = 0, account: String? = nil, timeoutMs: Int = 5_000) throws -> Message? {
        try request(.pull(Pull(req: req(), cursor: cursor, limit: 100, account: account)), timeoutMs: timeoutMs)
    }

    func push(_ ops: [Op], timeoutMs: Int = 5_000) throws -> Message? {
        try request(.push(Push(req: req(), ops: ops)), timeoutMs: timeoutMs)
    }
}

/// ZMQ_RCVBUF (the kernel receive buffer), so a client that does not read stops the server's sends sooner.
let ZMQ_RCVBUF_OPTION: Int32 = 12

/// How long a test waits for an answer that must not come: long enough for any real reply on this machine
/// (replies take milliseconds), short enough to keep the suite quick. Never a timing assertion: a late answer
/// would still fail the test the next time it is read.
let silenceMs = 400
