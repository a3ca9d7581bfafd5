import CZeroMQ

/// The ZeroMQ authentication handler (ZAP, RFC 27) of one context: a REP socket bound to `inproc://zeromq.zap.01`
/// that libzmq asks, during every CURVE handshake on a socket of that context, whether to admit the client's public
/// key. It admits exactly the keys its policy names for the socket's ZAP domain and answers with the user id the
/// policy binds to the key, which every message of that connection then carries (`Received.userID`).
///
/// It belongs to the IO thread that polls it: the owner adds `socket` to its `zmq_poll` and calls `serve()` when it
/// is readable. It must be created before any CURVE server socket of the context binds: without a handler, libzmq
/// admits every key.
public final class ZapHandler {
    /// Domain → public key (Z85) → user id.
    public var policy: [String: [String: String]]
    public let socket: Socket

    public static let endpoint = "inproc://zeromq.zap.01"

    public init(_ context: Context, policy: [String: [String: String]]) throws {
        self.policy = policy
        socket = try Socket(context, .rep)
        try socket.bind(Self.endpoint)
    }

    /// One handshake's outcome, for the owner's log.
    public struct Decision: Sendable, Equatable {
        public var domain: String
        public var address: String
        public var mechanism: String
        /// The client's public key (Z85), empty for a mechanism without one.
        public var publicKey: String
        /// The user id given to the connection; nil: refused.
        public var userID: String?
    }

    /// Answers every request waiting; returns what it decided, in order.
    @discardableResult
    public func serve() throws -> [Decision] {
        var decisions: [Decision] = []
        while let frames = try socket.receive(dontWait: true) {
            // version, request id, domain, address, routing id, mechanism, credentials…
            guard frames.count >= 6 else {
                // A malformed request (not from libzmq): REP must still answer to stay usable.
                try socket.send(Array("1.0".utf8), frames.count > 1 ? frames[1] : [], Array("500".utf8),
                                Array("malformed ZAP request".utf8), [], [])
                continue
            }
            let text = { (frame: Frame) in String(decoding: frame, as: UTF8.self) }
            let domain = text(frames[2]), mechanism = text(frames[5])
            var key = ""
            if mechanism == "CURVE", frames.count >= 7, frames[6].count == 32 { key = CurveKeyPair.z85(frames[6]) }
            let user = key.isEmpty ? nil : policy[domain]?[key]
            let status = user == nil ? "400" : "200"
            let reason = user == nil ? "key not admitted in domain \(domain)" : "OK"
            try socket.send(Array("1.0".utf8), frames[1], Array(status.utf8), Array(reason.utf8),
                            Array((user ?? "").utf8), [])
            decisions.append(Decision(domain: domain, address: text(frames[3]), mechanism: mechanism,
                                      publicKey: key, userID: user))
        }
        return decisions
    }

    public func close() { socket.close() }
}
