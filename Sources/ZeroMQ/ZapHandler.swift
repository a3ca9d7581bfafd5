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
/// The order matters: libzmq's CURVE server reads the ZAP reply once right after sending the request (on its IO
/// thread, inside the call that handles the client's INITIATE) and only then parses the client's metadata; a reply
/// already there wins that race, and the client's own `Identity` would then be applied after ours. So a reply is held
/// behind a **barrier through the IO thread**: after requests arrive, the handler sends a ping on a PAIR socket of the
/// same context whose peer is its own (over ipc), and releases those replies only once the ping came back. The context
/// has one IO thread, which runs one handler at a time: for the ping to come back it must have left the call that
/// sent the request, so the immediate read of the reply found nothing, and our `Identity` is applied after the
/// client's. The order is then a matter of sequence, not of timing (it was a 20 ms hold, which a stalled IO thread
/// could outlast). A ROUTER rather than a REP, so requests can wait while others are read.
///
/// It belongs to the IO thread that polls it: the owner adds `socket` to its `zmq_poll`, calls `serve()` when it is
/// readable or `holding` (replies wait for their barrier) and polls no longer than `nextReplyInMs`. It must be
/// created before any CURVE server socket of the context binds: without a handler, libzmq admits every key.
public final class ZapHandler {
    /// Domain → public key (Z85) → user id.
    public var policy: [String: [String: String]]
    /// Admits every peer with an empty user id, whatever its mechanism (NULL, `security: "none"`): only to hand out
    /// routing ids.
    public let open: Bool
    public let socket: Socket
    /// Replies not sent yet, oldest first: the barrier ping each waits for, and its frames.
    private var held: [(ping: UInt64, frames: [Frame])] = []
    private let context: Context
    /// The barrier (see the type's comment): pings go out on `pingOut` and come back on `pingIn`, both of this
    /// context, carrying `secret` and a number, so a local process that found the abstract socket's name cannot
    /// release a reply early by sending one.
    private var pingOut: Socket
    private var pingIn: Socket
    private let secret: [UInt8]
    private var pingsSent: UInt64 = 0
    private var pingsBack: UInt64 = 0
    /// When the oldest unanswered ping left; a barrier that stays silent this long is made again.
    private var waitingSince: UInt64?

    public static let endpoint = "inproc://zeromq.zap.01"
    /// How long a ping may go unanswered before the barrier is made again under a new name (it can only be lost if
    /// another local process took its place between bind and connect): replies keep waiting, never released early.
    public static let rebuildNanos: UInt64 = 1_000_000_000

    public init(_ context: Context, policy: [String: [String: String]], open: Bool = false) throws {
        self.policy = policy
        self.open = open
        self.context = context
        var generator = SystemRandomNumberGenerator()
        secret = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        socket = try Socket(context, .router)
        try socket.bind(Self.endpoint)
        (pingOut, pingIn) = try Self.barrier(context)
    }

    /// A PAIR pair over an abstract ipc socket (no file to leave behind when the process is killed), under a name
    /// no other handler uses.
    private static func barrier(_ context: Context) throws -> (Socket, Socket) {
        var generator = SystemRandomNumberGenerator()
        let name = (0..<16).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.joined()
        let endpoint = "ipc://@synclab-zap-\(getpid())-\(name)"
        let inbound = try Socket(context, .pair)
        try inbound.bind(endpoint)
        let outbound = try Socket(context, .pair)
        try outbound.connect(endpoint)
        return (outbound, inbound)
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

    /// While replies wait for their barrier, 1 (the ping comes back in tens of microseconds); nil when none is held.
    public var nextReplyInMs: Int? { held.isEmpty ? nil : 1 }

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
            held.append((pingsSent + 1, [
                message[0], [], Array("1.0".utf8), frames[1], Array(status.utf8), Array(reason.utf8),
                Array((user ?? "").utf8), user == nil ? [] : Self.identityMetadata(),
            ]))
            decisions.append(Decision(domain: domain, address: text(frames[3]), mechanism: mechanism,
                                      publicKey: key, userID: user))
        }
        if let last = held.last, last.ping > pingsSent { try ping() }
        try readPings()
        while let first = held.first, first.ping <= pingsBack {
            held.removeFirst()
            // A handshake that ended meanwhile has no pipe any more: its reply is nobody's loss.
            _ = try socket.send(first.frames, dontWait: true)
        }
        if held.isEmpty {
            waitingSince = nil
        } else if let since = waitingSince, Self.monotonicNanos() - since > Self.rebuildNanos {
            try rebuildBarrier()
        }
        return decisions
    }

    /// Sends the next ping through the IO thread; the replies held so far wait for it.
    private func ping() throws {
        pingsSent += 1
        var number = pingsSent.bigEndian
        let bytes = withUnsafeBytes(of: &number) { Array($0) }
        _ = try pingOut.send([secret + bytes], dontWait: true)
        if waitingSince == nil { waitingSince = Self.monotonicNanos() }
    }

    /// Takes every ping that came back; only ours count (the secret, then a number not above the last sent).
    private func readPings() throws {
        while let message = try pingIn.receive(dontWait: true) {
            guard message.count == 1, message[0].count == secret.count + 8,
                  Array(message[0].prefix(secret.count)) == secret else { continue }
            let number = message[0].suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard number <= pingsSent, number > pingsBack else { continue }
            pingsBack = number
            waitingSince = held.isEmpty || pingsBack == pingsSent ? nil : Self.monotonicNanos()
        }
    }

    /// A barrier whose pings do not come back: made again under a new name, and every held reply waits for a ping
    /// sent on it.
    private func rebuildBarrier() throws {
        pingOut.close()
        pingIn.close()
        (pingOut, pingIn) = try Self.barrier(context)
        pingsBack = pingsSent
        for index in held.indices { held[index].ping = pingsSent + 1 }
        waitingSince = nil
        try ping()
    }

    public func close() {
        socket.close()
        pingOut.close()
        pingIn.close()
    }
}
