import Foundation
import SyncProtocol
import ZeroMQ

/// The tests' one device-protocol client: a DEALER speaking the wire protocol with bounded waits, as a device, a pool
/// or an attacker would. Its `Options` say how it connects (reconnect interval, CURVE, routing id, receive limits),
/// how it sends (`SendMode`) and which reply a request takes (`ReplyMatching`); the server tests' devices, the
/// hostile clients of SecurityTests and the crash test's resending device differ only there.
public final class TestClient {
    /// How `send` and `sendRaw` hand a message to the socket.
    public enum SendMode: Sendable {
        /// Waits until libzmq has queued it: a device that must get its message out.
        case blocking
        /// Never waits: a message that cannot be queued (a CURVE server that never admitted the client) is dropped;
        /// either way nothing reaches the server.
        case dontWait
    }

    /// Which message a request takes as its reply; the ones it passes over are read and dropped.
    public enum ReplyMatching: Sendable {
        /// Only a reply carrying the request's `req` (for a request without one, a reply without one): replies to
        /// earlier attempts, stale welcomes among them, are skipped.
        case strict
        /// A reply carrying the request's `req` or none at all (for a request without one, the first message):
        /// replies to other requests are skipped.
        case skipMismatched
        /// The first message that comes, whatever it answers: a test that must see every reply.
        case none

        /// Whether `reply` is taken as the answer to a request whose `req` is `wanted`.
        public func accepts(_ reply: Message, wanted: Int?) -> Bool {
            let got = TestClient.req(of: reply)
            switch self {
            case .strict: return got == wanted
            case .skipMismatched: return wanted == nil || got == nil || got == wanted
            case .none: return true
            }
        }
    }

    public struct Options {
        /// ZMQ_RECONNECT_IVL, in milliseconds; nil keeps libzmq's default (100 ms).
        public var reconnectMs: Int32?
        public var sendMode: SendMode
        /// What `request` and `reply(to:timeoutMs:)` take unless a call says otherwise.
        public var replyMatching: ReplyMatching
        /// The client's key pair and the server's public key (Z85); nil: NULL security.
        public var curve: (pair: CurveKeyPair, serverKey: String)?
        /// A routing id of the test's choosing; nil: the one libzmq gives each connection.
        public var routingID: [UInt8]?
        /// ZMQ_RCVHWM, in messages.
        public var receiveHWM: Int32?
        /// ZMQ_RCVBUF (the kernel's receive buffer), in bytes: a client that does not read stops the peer's sends
        /// sooner with a small one.
        public var receiveBufferBytes: Int32?

        public init(reconnectMs: Int32?, sendMode: SendMode, replyMatching: ReplyMatching,
                    curve: (pair: CurveKeyPair, serverKey: String)? = nil, routingID: [UInt8]? = nil,
                    receiveHWM: Int32? = nil, receiveBufferBytes: Int32? = nil) {
            self.reconnectMs = reconnectMs
            self.sendMode = sendMode
            self.replyMatching = replyMatching
            self.curve = curve
            self.routingID = routingID
            self.receiveHWM = receiveHWM
            self.receiveBufferBytes = receiveBufferBytes
        }

        /// A device of the server's process tests: reconnects after 10 ms, blocking sends, replies to other requests
        /// skipped.
        public static var device: Options {
            Options(reconnectMs: 10, sendMode: .blocking, replyMatching: .skipMismatched)
        }
    }

    public let context: Context
    public let endpoint: String
    public let options: Options
    public private(set) var socket: Socket
    private var nextReq = 0

    public init(_ context: Context, endpoint: String, options: Options = .device) throws {
        self.context = context
        self.endpoint = endpoint
        self.options = options
        socket = try Self.connect(context, endpoint, options)
    }

    deinit { socket.close() }

    /// ZMQ_RCVBUF, which the ZeroMQ module has no setter for.
    static let receiveBufferOption: Int32 = 12

    private static func connect(_ context: Context, _ endpoint: String, _ options: Options) throws -> Socket {
        let socket = try Socket(context, .dealer)
        if let ms = options.reconnectMs { try socket.setReconnectInterval(ms: ms) }
        if let curve = options.curve { try socket.setCurveClient(curve.pair, serverKey: curve.serverKey) }
        if let id = options.routingID { try socket.setRoutingID(id) }
        if let hwm = options.receiveHWM { try socket.setReceiveHighWaterMark(hwm) }
        if let bytes = options.receiveBufferBytes { try socket.setOption(Self.receiveBufferOption, bytes) }
        try socket.connect(endpoint)
        return socket
    }

    /// A new connection with the same options: without a `routingID` of the test's, a new routing id, so the server
    /// sees a new peer that must say hello again.
    public func reconnect() throws {
        socket.close()
        socket = try Self.connect(context, endpoint, options)
    }

    /// The next request number of this client.
    public func req() -> Int {
        nextReq += 1
        return nextReq
    }

    public func send(_ message: Message) throws { try sendRaw(Codec.encode(message)) }

    public func sendRaw(_ frames: [[UInt8]]) throws {
        _ = try socket.send(frames, dontWait: options.sendMode == .dontWait)
    }

    /// The next message's frames as they came, within `timeoutMs`; nil when nothing came.
    public func receiveFrames(timeoutMs: Int) throws -> [[UInt8]]? {
        try socket.receive(timeoutMs: timeoutMs)
    }

    /// The next message within `timeoutMs`, decoded; nil when nothing came.
    public func receive(timeoutMs: Int) throws -> Message? {
        try receiveFrames(timeoutMs: timeoutMs).map { try Codec.decode($0) }
    }

    /// The first message within `timeoutMs` that `matching` (the client's own unless given) takes as the reply to a
    /// request whose `req` is `wanted`; the others are dropped. Nil when none came.
    public func reply(to wanted: Int?, matching: ReplyMatching? = nil, timeoutMs: Int) throws -> Message? {
        let matching = matching ?? options.replyMatching
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(timeoutMs))
        while clock.now < deadline {
            let left = clock.now.duration(to: deadline).components
            let leftMs = Int(left.seconds) * 1_000 + Int(left.attoseconds / 1_000_000_000_000_000)
            guard let message = try receive(timeoutMs: max(leftMs, 1)) else { return nil }
            if matching.accepts(message, wanted: wanted) { return message }
        }
        return nil
    }

    /// Sends `message` and waits for its reply (`reply(to:matching:timeoutMs:)`); nil when none came.
    public func request(_ message: Message, matching: ReplyMatching? = nil, timeoutMs: Int = 5_000) throws -> Message? {
        try send(message)
        return try reply(to: Self.req(of: message), matching: matching, timeoutMs: timeoutMs)
    }

    /// The request number a message carries; nil for the messages that have none.
    public static func req(of message: Message) -> Int? {
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

    public func hello(_ device: String, _ account: String, _ token: String, _ platform: Platform = .android,
                      timeoutMs: Int = 5_000) throws -> Message? {
        try request(.hello(Hello(device: device, account: account, token: token, platform: platform)),
                    timeoutMs: timeoutMs)
    }

    /// A push of `ops`; with `pageFrom`, asking for the page after that cursor with the results (`limit` changes).
    public func push(_ ops: [Op], pageFrom cursor: Int? = nil, limit: Int = 100, timeoutMs: Int = 5_000) throws
        -> Message?
    {
        try request(.push(Push(req: req(), ops: ops, cursor: cursor, limit: cursor == nil ? nil : limit)),
                    timeoutMs: timeoutMs)
    }

    public func pull(cursor: Int = 0, limit: Int = 100, account: String? = nil, timeoutMs: Int = 5_000) throws
        -> Message?
    {
        try request(.pull(Pull(req: req(), cursor: cursor, limit: limit, account: account)), timeoutMs: timeoutMs)
    }
}
