import CZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// The ZeroMQ authentication handler (ZAP, RFC 27) of one context: a ROUTER bound to `inproc://zeromq.zap.01` that
/// libzmq asks, during every handshake on a socket of that context with a ZAP domain, whether to admit the client's
/// public key. It admits exactly the keys its policy names for the socket's ZAP domain and answers with the user id
/// the policy binds to the key, which every message of that connection then carries (`Received.userID`).
///
/// Every admitted connection also gets its routing id from here, never from the peer: the reply's metadata carries
/// an `Identity` property of 16 fresh random bytes, which libzmq applies over the one the peer sent when the reply
/// is processed after the peer's INITIATE (CURVE) or READY (NULL). So no peer chooses the id a ROUTER knows it by,
/// and the ROUTER never generates one: libzmq 4.3.4 aborts the process when a generated id (`0x00` + a counter)
/// meets one a peer chose (`zmq_assert` in `routing_socket_base_t::add_out_pipe`), which one hostile tenant could
/// otherwise arrange (docs/SECURITY.md, "A tenant cannot crash a role").
///
/// The order matters, so a reply is held `replyDelayNanos` before it is sent: libzmq's CURVE server reads the ZAP
/// reply once right after sending the request and only then parses the client's metadata; a reply sent at once
/// often arrives in between (the woken handler thread preempts libzmq's IO thread on a busy machine), and the
/// client's own `Identity` wins. A ROUTER rather than a REP, so requests can wait while others are read.
///
/// It belongs to the IO thread that polls it: the owner adds `socket` to its `zmq_poll`, calls `serve()` when it is
/// readable or `holding` (held replies fall due) and polls no longer than `nextReplyInMs`. It must be
/// created before any CURVE server socket of the context binds: without a handler, libzmq admits every key.
public final class ZapHandler {
    /// Domain → public key (Z85) → user id.
    public var policy: [String: [String: String]]
    /// Admits every peer with an empty user id, whatever its mechanism (NULL, `security: "none"`): only to hand out
    /// routing ids.
    public let open: Bool
    public let socket: Socket
    /// Replies not sent yet, oldest first: when each is due and its frames.
    private var held: [(due: UInt64, frames: [Frame])] = []

    public static let endpoint = "inproc://zeromq.zap.01"
    /// How long a reply is held: far longer than libzmq's IO thread needs between sending a request and parsing the
    /// client's metadata (microseconds, unless the thread is preempted right there): 5 ms still lost the race once in
    /// the hostile suite with four test suites running beside it on two cores. Each handshake waits this once.
    public static let replyDelayNanos: UInt64 = 20_000_000

    public init(_ context: Context, policy: [String: [String: String]], open: Bool = false) throws {
        self.policy = policy
        self.open = open
        socket = try Socket(context, .router)
        try socket.bind(Self.endpoint)
    }

    /// The ZAP reply's metadata (ZMTP property encoding: name length, name, 4-byte value length, value) naming a
    /// fresh routing id: 16 bytes from the system's generator, the first never zero (libzmq's own ids are 5 bytes
    /// starting with zero, so the two kinds never meet).
    static func identityMetadata() -> Frame {
        var generator = SystemRandomNumberGenerator()
        var id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        id[0] = UInt8.random(in: 1...255, using: &generator)
        let name = Array("Identity".utf8)
        return [UInt8(name.count)] + name + [0, 0, 0, UInt8(id.count)] + id
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

    static func monotonicNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Whether replies are held: the owner then calls `serve()` on every turn, readable or not.
    public var holding: Bool { !held.isEmpty }

    /// Milliseconds until the next held reply is due (at least 1); nil when none is held.
    public var nextReplyInMs: Int? {
        guard let first = held.first else { return nil }
        let now = Self.monotonicNanos()
        return first.due <= now ? 0 : Int((first.due - now + 999_999) / 1_000_000)
    }

    /// Decides every request waiting (replies are held) and sends the replies that are due; returns what it decided,
    /// in order.
    @discardableResult
    public func serve() throws -> [Decision] {
        var decisions: [Decision] = []
        while let message = try socket.receive(dontWait: true) {
            // pipe id, empty delimiter, version, request id, domain, address, routing id, mechanism, credentials…
            guard message.count >= 8, message[1].isEmpty else {
                // Not from libzmq: answered at once, so a malformed asker is not kept waiting.
                let id = message.count > 3 ? message[3] : []
                _ = try socket.send([message[0], [], Array("1.0".utf8), id, Array("500".utf8),
                                     Array("malformed ZAP request".utf8), [], []], dontWait: true)
                continue
            }
            let frames = Array(message.dropFirst(2))
            let text = { (frame: Frame) in String(decoding: frame, as: UTF8.self) }
            let domain = text(frames[2]), mechanism = text(frames[5])
            var key = ""
            if mechanism == "CURVE", frames.count >= 7, frames[6].count == 32 { key = CurveKeyPair.z85(frames[6]) }
            let user = open ? "" : key.isEmpty ? nil : policy[domain]?[key]
            let status = user == nil ? "400" : "200"
            let reason = user == nil ? "key not admitted in domain \(domain)" : "OK"
            held.append((Self.monotonicNanos() + Self.replyDelayNanos, [
                message[0], [], Array("1.0".utf8), frames[1], Array(status.utf8), Array(reason.utf8),
                Array((user ?? "").utf8), user == nil ? [] : Self.identityMetadata(),
            ]))
            decisions.append(Decision(domain: domain, address: text(frames[3]), mechanism: mechanism,
                                      publicKey: key, userID: user))
        }
        let now = Self.monotonicNanos()
        while let first = held.first, first.due <= now {
            held.removeFirst()
            // A handshake that ended meanwhile has no pipe any more: its reply is nobody's loss.
            _ = try socket.send(first.frames, dontWait: true)
        }
        return decisions
    }

    public func close() { socket.close() }
}
