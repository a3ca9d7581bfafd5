import CZeroMQ

/// One frame of a multipart message.
public typealias Frame = [UInt8]

/// The socket kinds the lab uses.
public enum SocketKind: Sendable {
    case router, dealer, pub, sub, push, pull, pair, rep

    var raw: Int32 {
        switch self {
        case .router: return ZMQ_ROUTER
        case .dealer: return ZMQ_DEALER
        case .pub: return ZMQ_PUB
        case .sub: return ZMQ_SUB
        case .push: return ZMQ_PUSH
        case .pull: return ZMQ_PULL
        case .pair: return ZMQ_PAIR
        case .rep: return ZMQ_REP
        }
    }
}

/// A libzmq socket. It belongs to the thread that uses it: libzmq sockets are not thread safe.
///
/// `@unchecked Sendable` only so a socket can be created on one thread and handed to the IO thread that then owns it;
/// it is never used from two threads at once.
public final class Socket: @unchecked Sendable {
    public let kind: SocketKind
    let handle: UnsafeMutableRawPointer
    private let context: Context  // keeps the context alive while the socket is open
    private var closed = false
    /// The last endpoint bound or connected, for error messages.
    public private(set) var endpoint: String?

    /// The largest inbound message any socket accepts unless told otherwise: 4 MiB, well above
    /// `Limits.maxBodyBytes` (PROTOCOL.md §1), so a 1–4 MiB body still reaches the decoder and gets `tooLarge`.
    /// libzmq checks it against a frame's declared size before buffering any of it, during the handshake too, so a
    /// peer that has not authenticated cannot make a socket hold a large frame (docs/SECURITY.md).
    public static let maxMessageBytes: Int64 = 4 << 20

    /// Makes a socket with a linger of `lingerMs` (default 0: closing never waits on unsent messages) and
    /// `maxMessageBytes` as its inbound limit: set at creation, so no socket of any role is left without one.
    public init(_ context: Context, _ kind: SocketKind, lingerMs: Int32 = 0) throws {
        guard let handle = zmq_socket(context.handle, kind.raw) else { throw ZMQError.last("socket") }
        self.kind = kind
        self.handle = handle
        self.context = context
        try setOption(ZMQ_LINGER, lingerMs)
        try setMaxMessageSize(Self.maxMessageBytes)
    }

    deinit { close() }

    public func close() {
        guard !closed else { return }
        closed = true
        zmq_close(handle)
    }

    // MARK: - Endpoints

    /// Binds to `endpoint`; throws a `ZMQError` naming it when the address is malformed or taken.
    public func bind(_ endpoint: String) throws {
        try retrying("bind", endpoint: endpoint) { zmq_bind(handle, endpoint) }
        // Recorded only once it holds, so later errors never name an endpoint the socket does not have.
        self.endpoint = endpoint
    }

    /// Connects to `endpoint` (asynchronously, as libzmq does: the peer need not be there yet).
    public func connect(_ endpoint: String) throws {
        try retrying("connect", endpoint: endpoint) { zmq_connect(handle, endpoint) }
        self.endpoint = endpoint
    }

    public func unbind(_ endpoint: String) throws {
        try retrying("unbind", endpoint: endpoint) { zmq_unbind(handle, endpoint) }
    }

    public func disconnect(_ endpoint: String) throws {
        try retrying("disconnect", endpoint: endpoint) { zmq_disconnect(handle, endpoint) }
    }

    /// The endpoint actually bound, e.g. the port chosen for `tcp://127.0.0.1:*`.
    public var lastEndpoint: String {
        var buffer = [CChar](repeating: 0, count: 256)
        var size = buffer.count
        _ = zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size)
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Sending

    /// Sends a multipart message. Returns false when it would block (with `dontWait`) or, on a ROUTER with
    /// router-mandatory, when the peer is unknown (EHOSTUNREACH); throws on other errors.
    @discardableResult
    public func send(_ frames: [Frame], dontWait: Bool = false) throws -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        for (index, frame) in frames.enumerated() {
            guard try sendFrame(frame, more: index < frames.count - 1, dontWait: dontWait) else { return false }
        }
        return true
    }

    /// `send([peer, header, body])` with no array of frames built: the message of a ROUTER to one peer.
    public func send(to peer: Frame, header: Frame, body: Frame, dontWait: Bool = false) throws -> Bool {
        guard try sendFrame(peer, more: true, dontWait: dontWait) else { return false }
        _ = try sendFrame(header, more: true, dontWait: dontWait)
        _ = try sendFrame(body, more: false, dontWait: dontWait)
        return true
    }

    /// One frame of a message; false on EAGAIN or EHOSTUNREACH, which only the first frame of a message can meet.
    private func sendFrame(_ frame: Frame, more: Bool, dontWait: Bool) throws -> Bool {
        let flags: Int32 = (dontWait ? ZMQ_DONTWAIT : 0) | (more ? ZMQ_SNDMORE : 0)
        while true {
            let rc = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
            if rc >= 0 { return true }
            let err = zmq_errno()
            if err == EINTR { continue }
            // A multipart message is atomic in libzmq: failing on the first frame sends nothing; later frames of a
            // message whose first frame was accepted do not fail with EAGAIN.
            if err == EAGAIN || err == EHOSTUNREACH { return false }
            throw ZMQError(code: err, operation: "send", endpoint: endpoint)
        }
    }

    @discardableResult
    public func send(_ frames: Frame..., dontWait: Bool = false) throws -> Bool {
        try send(frames, dontWait: dontWait)
    }

    // MARK: - Receiving

    /// Receives one whole multipart message. With `dontWait`, nil means nothing is waiting (EAGAIN is not an error).
    /// Without it, blocks until a message arrives, the receive timeout passes (nil), or the context is shut down
    /// (throws an error whose `isTerminated` is true).
    public func receive(dontWait: Bool = false) throws -> [Frame]? {
        try receiveMessage(dontWait: dontWait, metadata: false)?.frames
    }

    /// `receive`, with who sent it: the user id the ZAP handler gave the connection (CURVE: the identity bound to
    /// the client's public key; nil under the NULL mechanism) and the connection's file descriptor (-1 when
    /// unknown, e.g. inproc), as `ConnectionMonitor` reports it when the connection ends. Read from the message's
    /// own metadata (`zmq_msg_gets(msg, "User-Id")`), never from the routing id a client can choose.
    public func receiveWithSender(dontWait: Bool = false) throws -> Received? {
        try receiveMessage(dontWait: dontWait, metadata: true)
    }

    /// One loop for both: `metadata` reads each frame's User-Id and source descriptor (skipped on hot paths that do
    /// not need them).
    private func receiveMessage(dontWait: Bool, metadata: Bool) throws -> Received? {
        var frames: [Frame] = []
        var userID: String?
        var connection: Int32 = -1
        var msg = zmq_msg_t()
        zmq_msg_init(&msg)
        defer { zmq_msg_close(&msg) }
        while true {
            let rc = zmq_msg_recv(&msg, handle, dontWait && frames.isEmpty ? ZMQ_DONTWAIT : 0)
            if rc < 0 {
                let err = zmq_errno()
                if err == EINTR { continue }
                if err == EAGAIN && frames.isEmpty { return nil }
                throw ZMQError(code: err, operation: "receive", endpoint: endpoint)
            }
            if metadata {
                // The ROUTER's routing-id frame is made locally; the frames that came over the wire carry metadata.
                if let text = zmq_msg_gets(&msg, "User-Id") {
                    let value = String(cString: text)
                    if !value.isEmpty { userID = value }
                }
                let fd = zmq_msg_get(&msg, 2)  // ZMQ_SRCFD (deprecated name, still served by libzmq 4.3)
                if fd >= 0 { connection = fd }
            }
            let size = zmq_msg_size(&msg)
            if size == 0 {
                frames.append([])
            } else {
                let data = zmq_msg_data(&msg)!.assumingMemoryBound(to: UInt8.self)
                frames.append(Frame(UnsafeBufferPointer(start: data, count: size)))
            }
            if zmq_msg_more(&msg) == 0 { return Received(frames: frames, userID: userID, connection: connection) }
        }
    }

    /// Whether a message is waiting to be read, without blocking.
    public var hasInput: Bool {
        (try? intOption(ZMQ_EVENTS)).map { $0 & ZMQ_POLLIN != 0 } ?? false
    }

    // MARK: - Options

    public func setOption(_ option: Int32, _ value: Int32) throws {
        var value = value
        try retrying("setsockopt(\(option))", endpoint: endpoint) {
            zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size)
        }
    }

    public func setOption(_ option: Int32, bytes: [UInt8]) throws {
        try retrying("setsockopt(\(option))", endpoint: endpoint) {
            bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        }
    }

    public func intOption(_ option: Int32) throws -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        try retrying("getsockopt(\(option))", endpoint: endpoint) { zmq_getsockopt(handle, option, &value, &size) }
        return value
    }

    /// This socket's identity as ROUTER peers see it. Set before connecting.
    public func setRoutingID(_ id: [UInt8]) throws { try setOption(ZMQ_ROUTING_ID, bytes: id) }

    public func setSendHighWaterMark(_ messages: Int32) throws { try setOption(ZMQ_SNDHWM, messages) }
    public func setReceiveHighWaterMark(_ messages: Int32) throws { try setOption(ZMQ_RCVHWM, messages) }
    /// Queue messages only to completed connections.
    public func setImmediate(_ on: Bool) throws { try setOption(ZMQ_IMMEDIATE, on ? 1 : 0) }
    /// A ROUTER reports an unroutable message (EHOSTUNREACH) instead of dropping it silently.
    public func setRouterMandatory(_ on: Bool) throws { try setOption(ZMQ_ROUTER_MANDATORY, on ? 1 : 0) }
    /// A ROUTER lets a new connection with a known routing id take it over (a restarted peer).
    public func setRouterHandover(_ on: Bool) throws { try setOption(ZMQ_ROUTER_HANDOVER, on ? 1 : 0) }
    public func setReceiveTimeout(ms: Int32) throws { try setOption(ZMQ_RCVTIMEO, ms) }
    public func setSendTimeout(ms: Int32) throws { try setOption(ZMQ_SNDTIMEO, ms) }
    public func setReconnectInterval(ms: Int32) throws { try setOption(ZMQ_RECONNECT_IVL, ms) }
    public func setLinger(ms: Int32) throws { try setOption(ZMQ_LINGER, ms) }
    /// ZMTP heartbeats: a PING every `intervalMs`, the peer considered gone after `timeoutMs` without traffic.
    public func setHeartbeat(intervalMs: Int32, timeoutMs: Int32) throws {
        try setOption(ZMQ_HEARTBEAT_IVL, intervalMs)
        try setOption(ZMQ_HEARTBEAT_TIMEOUT, timeoutMs)
    }
    /// Largest inbound message accepted; a larger one closes the connection inside libzmq (-1: no limit).
    public func setMaxMessageSize(_ bytes: Int64) throws {
        var value = bytes
        try retrying("setsockopt(ZMQ_MAXMSGSIZE)", endpoint: endpoint) {
            zmq_setsockopt(handle, ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size)
        }
    }
    /// A SUB socket receives messages whose first frame starts with `prefix` (empty: everything).
    public func subscribe(_ prefix: [UInt8] = []) throws { try setOption(ZMQ_SUBSCRIBE, bytes: prefix) }
    /// CURVE server side (the secret key, 32 bytes).
    public func setCurveServer(secretKey: [UInt8]) throws {
        try setOption(ZMQ_CURVE_SERVER, 1)
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: secretKey)
    }
    /// CURVE client side: the server's public key and this client's key pair (32 bytes each).
    public func setCurveClient(serverKey: [UInt8], publicKey: [UInt8], secretKey: [UInt8]) throws {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: serverKey)
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: publicKey)
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: secretKey)
    }

    /// CURVE server side from a key pair: this socket's secret key; clients are checked by the context's ZAP handler
    /// in `domain`.
    public func setCurveServer(_ pair: CurveKeyPair, domain: String) throws {
        try setZapDomain(domain)
        try setCurveServer(secretKey: CurveKeyPair.bytes(z85: pair.secretKey)!)
    }

    /// CURVE client side: this socket's key pair and the public key (Z85) of the server it connects to.
    public func setCurveClient(_ pair: CurveKeyPair, serverKey: String) throws {
        guard let server = CurveKeyPair.bytes(z85: serverKey) else {
            throw ZMQError(code: EINVAL, operation: "setsockopt(ZMQ_CURVE_SERVERKEY)", endpoint: endpoint)
        }
        try setCurveClient(serverKey: server, publicKey: CurveKeyPair.bytes(z85: pair.publicKey)!,
                           secretKey: CurveKeyPair.bytes(z85: pair.secretKey)!)
    }

    /// A bound socket's security: CURVE server with `pair` (nil: NULL), its handshakes checked by the context's ZAP
    /// handler in `domain` either way (under NULL the handler admits everyone and only gives routing ids).
    public func setServerSecurity(_ pair: CurveKeyPair?, domain: String) throws {
        if let pair { try setCurveServer(pair, domain: domain) } else { try setZapDomain(domain) }
    }

    /// A ROUTER bound to `endpoint` with `setServerSecurity(pair, domain:)`, the one way every role binds its control and
    /// listening sockets. `configure` sets the rest before the bind: libzmq copies options into the listener, so an
    /// option set after it would not apply to the connections accepted later.
    public static func boundRouter(_ context: Context, endpoint: String, security pair: CurveKeyPair?, domain: String,
                                   lingerMs: Int32 = 0, configure: (Socket) throws -> Void = { _ in }) throws -> Socket
    {
        let socket = try Socket(context, .router, lingerMs: lingerMs)
        try socket.setServerSecurity(pair, domain: domain)
        try configure(socket)
        try socket.bind(endpoint)
        return socket
    }

    /// The ZAP domain a bound socket's handshakes are checked in (ZMQ_ZAP_DOMAIN).
    public func setZapDomain(_ domain: String) throws { try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8)) }

    // MARK: -

    private func retrying(_ operation: String, endpoint: String?, _ call: () -> Int32) throws {
        while call() != 0 {
            let err = zmq_errno()
            if err == EINTR { continue }
            throw ZMQError(code: err, operation: operation, endpoint: endpoint)
        }
    }
}

/// A message with who sent it (`Socket.receiveWithSender`).
public struct Received: Sendable {
    public var frames: [Frame]
    /// The ZAP user id of the connection (CURVE: bound to the client's public key); nil under NULL.
    public var userID: String?
    /// The connection's file descriptor; -1 when libzmq does not know one.
    public var connection: Int32
}
