import Foundation
import LabKit
import SyncProtocol

/// The server's logic: sessions, access checks, fault decisions, results, notices and counters. It does no IO,
/// reads no clock and draws randomness only from the seeded generator it holds; each `on…` method takes one event
/// and returns the directives the shell carries out in order (`ServerShell`).
public struct ServerInstance: Sendable {
    /// Known devices by id: loaded from the database at start, so hellos are checked against it.
    public internal(set) var directory: [String: DeviceRecord]
    /// Authenticated sessions by routing id.
    public internal(set) var sessions: [[UInt8]: Session] = [:]
    public internal(set) var faults: ServerFaults
    /// The design switches (issue 13).
    public internal(set) var switches: ServerSwitches
    public internal(set) var stats: ServerStats
    var generator: SeededGenerator
    /// Sessions are forgotten least recently used first past this many: a device reconnecting under a new routing id
    /// leaves its old session behind, and libzmq does not say when a peer goes away.
    /// The most sessions held at once (past it the least recently used is forgotten); nil: twice the devices the
    /// server knows, at least 4,096. A fixed 4,096 made a fleet of more devices thrash: every hello past it evicted a
    /// live session, whose next request was refused and said hello again (found by `synclab sim` at 10,000 devices).
    let sessionCapacity: Int?
    var clock: UInt64 = 0
    /// Real nanoseconds of the message being handled (the driver sets it): what `tokens` refills by.
    public var realNanos: UInt64 = 0
    /// Wrong tokens per connection and per key (docs/SECURITY.md).
    var tokens = TokenThrottle()

    /// The receiver name used in `unexpected` errors.
    static let receiver = "synclab-server"

    public init(devices: [DeviceRecord], heads: [String: Int], faults: ServerFaults = .off, seed: UInt64,
                sessionCapacity: Int? = nil, switches: ServerSwitches = .correct)
    {
        self.switches = switches
        var directory: [String: DeviceRecord] = [:]
        for device in devices { directory[device.id] = device }
        self.directory = directory
        self.faults = faults
        self.stats = ServerStats(heads: heads)
        self.generator = SeededGenerator.derived(seed: seed, name: "server.faults")
        self.sessionCapacity = sessionCapacity.map { max($0, 1) }
    }

    /// The session of `peer`, if it said hello (over the same connection, with the same key).
    public func session(of peer: Peer) -> Session? {
        guard let session = sessions[peer.routingID], session.user == peer.user,
              session.connection == peer.connection
        else { return nil }
        return session
    }

    // MARK: - Device messages

    /// A message arrived on the request socket from `peer` (frames after the routing envelope).
    public mutating func onDeviceMessage(from peer: Peer, frames: [[UInt8]]) -> [ServerDirective] {
        clock += 1
        let message: Message
        switch Codec.decodeOrReply(frames) {
        case .success(let decoded): message = decoded
        case .failure(let error):
            // Nobody answers an error, not even one that does not decode: no error loops between two peers.
            if frames.first == Self.errorHeader {
                return refuse(peer, req: nil, code: error.code, message: error.description, answer: false)
            }
            return refuse(peer, req: Self.requestNumber(in: frames), code: error.code, message: error.description)
        }
        switch message {
        case .hello(let hello):
            return onHello(hello, from: peer)
        case .push(let push):
            return onPush(push, from: peer)
        case .pull(let pull):
            return onPull(pull, from: peer)
        case .error:
            let error = ProtocolError.unexpected(type: message.type, receiver: Self.receiver)
            return refuse(peer, req: nil, code: error.code, message: error.description, answer: false)
        case .welcome, .pushResult, .page, .notice, .register, .registered, .deviceState, .hint, .control,
            .controlAck:
            let error = ProtocolError.unexpected(type: message.type, receiver: Self.receiver)
            return refuse(peer, req: Self.requestNumber(in: frames), code: error.code, message: error.description)
        }
    }

    mutating func onHello(_ hello: Hello, from peer: Peer) -> [ServerDirective] {
        let refusal: (ErrorCode, String)?
        if let user = peer.user, user != hello.device {
            // The connection's CURVE key is another device's: the key, not the hello, says who this is.
            refusal = (.badToken, "this connection's key is not device \"\(Self.quoted(hello.device))\"'s")
        } else if case .refuse(let announce) = tokens.verdict(throttled(peer), now: realNanos) {
            let line = EventLine(.authThrottled, [("device", .string(hello.device)), ("peer", .string(peer.label))])
            return refuse(peer, req: nil, code: .badToken, message: "too many wrong tokens from this connection or "
                + "key: at most \(Int(TokenThrottle.burst)), then one a second", device: hello.device)
                + (announce ? [.log(line)] : [])
        } else if let record = directory[hello.device] {
            let tokenMatches = TokenHash.matches(stored: record.token, presented: hello.token)
            if !tokenMatches { tokens.failed(throttled(peer), now: realNanos) }
            switch AccountsFile.contradiction(tokenMatches: tokenMatches, claimedAccount: hello.account,
                                              claimedPlatform: hello.platform, account: record.account,
                                              platform: record.platform) {
            case .token?:
                refusal = (.badToken, "bad token for device \"\(hello.device)\"")
            case .account(let owner)?:
                // Only a holder of the device's token learns which account it belongs to.
                refusal = (.wrongAccount, "device \"\(hello.device)\" belongs to account \"\(owner)\", "
                    + "not \"\(hello.account)\"")
            case .platform(let platform)?:
                refusal = (.invalid, "device \"\(hello.device)\" is \(platform.rawValue) in the accounts file, "
                    + "not \(hello.platform.rawValue)")
            case nil:
                refusal = nil
            }
        } else {
            refusal = (.unknownDevice, "unknown device \"\(hello.device)\": the server has no such device")
        }
        if let (code, text) = refusal {
            // A failed hello ends whatever session this connection had.
            if session(of: peer) != nil { sessions[peer.routingID] = nil }
            var directives = refuse(peer, req: nil, code: code, message: text, device: hello.device)
            directives.append(.log(EventLine(.helloRefused, [
                ("device", .string(hello.device)), ("account", .string(hello.account)), ("reason", .string(text)),
            ])))
            return directives
        }
        open(Session(device: hello.device, account: hello.account, lastUse: clock, user: peer.user,
                     connection: peer.connection), for: peer)
        let head = stats.heads[hello.account] ?? 0
        let accepted = EventLine(.helloAccepted, [
            ("device", .string(hello.device)), ("account", .string(hello.account)), ("peer", .string(peer.label)),
        ])
        let welcome = Welcome(device: hello.device, account: hello.account, head: head)
        return [.log(accepted)] + reply(peer, .welcome(welcome))
    }

    /// The throttle's buckets for a hello from `peer`: its connection (its routing id, which the ZAP handler gives)
    /// and its key.
    func throttled(_ peer: Peer) -> [String] { TokenThrottle.names(connection: peer.label, user: peer.user) }

    mutating func onPull(_ pull: Pull, from peer: Peer) -> [ServerDirective] {
        guard let session = touch(peer) else {
            return refuse(peer, req: pull.req, code: .notAuthenticated,
                          message: "pull before hello: say hello with the device's token first")
        }
        if let account = pull.account, account != session.account {
            return refuse(peer, req: pull.req, code: .wrongAccount,
                          message: "device \"\(session.device)\" may read only account \"\(session.account)\", "
                              + "not \"\(Self.quoted(account))\"", device: session.device)
        }
        return [.pull(PullRequest(peer: peer, req: pull.req, device: session.device, account: session.account,
                                  cursor: pull.cursor, limit: pull.limit))]
    }

    /// The store read a page: a pull's, or the one a push asked for (sent with its results when both fit in one body;
    /// else the results go alone and the device pulls the page).
    public mutating func onPulled(_ request: PullRequest, page: PageSlice) -> [ServerDirective] {
        if let results = request.pushResults, !page.fits(with: results) {
            return reply(request.peer, .pushResult(PushResult(req: request.req, results: results)))
        }
        stats.pulls += 1
        stats.heads[request.account] = max(stats.heads[request.account] ?? 0, page.head)
        var fields: [(String, JSONValue)] = [
            ("device", .string(request.device)), ("cursor", .int(request.cursor)),
            ("count", .int(page.changes.count)), ("next", .int(page.next)), ("head", .int(page.head)),
        ]
        let body = Page(req: request.req, changes: page.changes, next: page.next, head: page.head)
        guard let results = request.pushResults else {
            return [.log(EventLine(.pullServed, fields))]
                + reply(request.peer, .page(body), slowedByMs: faults.slowPullMs)
        }
        fields.append(("via", "push"))
        return [.log(EventLine(.pullServed, fields))]
            + reply(request.peer, .pushResult(PushResult(req: request.req, results: results, page: body)))
    }

    /// The store could not read the page: a cursor beyond the head, or a database failure. A push that asked for
    /// it gets its results alone (its ops are applied); the device's own pull then meets the error.
    public mutating func onPullFailed(_ request: PullRequest, error: ServerError) -> [ServerDirective] {
        if let results = request.pushResults {
            return reply(request.peer, .pushResult(PushResult(req: request.req, results: results)))
        }
        let code: ErrorCode
        switch error {
        case .cursorAhead: code = .cursorAhead
        case .database(_, let busy): code = busy ? .busy : .internal
        case .usage, .accounts, .startup, .deviceMoved, .invalidArgument, .io: code = .internal
        }
        return refuse(request.peer, req: request.req, code: code, message: error.description, device: request.device)
    }

    // MARK: - Helpers

    /// An error reply (unless `answer` is false: the refused message was itself an `error`) and a
    /// `request.refused` event; nothing else happens. The message quotes at most a short prefix of what was sent.
    mutating func refuse(_ peer: Peer, req: Int?, code: ErrorCode, message: String, device: String? = nil,
                         answer: Bool = true) -> [ServerDirective]
    {
        let message = Self.bounded(message)
        stats.refused += 1
        var fields: [(String, JSONValue)] = [
            ("code", .string(code.rawValue)), ("message", .string(message)), ("peer", .string(peer.label)),
        ]
        if let device = device ?? session(of: peer)?.device { fields.append(("device", .string(device))) }
        guard answer else { return [.log(EventLine(.requestRefused, fields))] }
        return [.log(EventLine(.requestRefused, fields))]
            + reply(peer, .error(ErrorReply(req: req, code: code, message: message)))
    }

    /// The header frame of an `error`, which is never answered.
    static let errorHeader = Array("SL1 error".utf8)
    /// Longest text of a sent field an error quotes (a longer one is cut, saying how long it was).
    static let quoteBytes = 64
    /// Longest error message: an error about a huge field or header quotes a prefix of it, never all of it.
    static let maxMessageBytes = 256

    /// `text` cut to `quoteBytes` on a character boundary, with its length when it was longer.
    static func quoted(_ text: String) -> String {
        guard text.utf8.count > quoteBytes else { return text }
        var prefix = ""
        for character in text {
            if prefix.utf8.count + character.utf8.count > quoteBytes { break }
            prefix.append(character)
        }
        return prefix + "…(\(text.utf8.count) bytes)"
    }

    /// An error message bounded to `maxMessageBytes`, cut on a character boundary.
    static func bounded(_ message: String) -> String {
        guard message.utf8.count > maxMessageBytes else { return message }
        var prefix = ""
        for character in message {
            if prefix.utf8.count + character.utf8.count > maxMessageBytes - 24 { break }
            prefix.append(character)
        }
        return prefix + "…(\(message.utf8.count) bytes)"
    }

    /// A connection ended (the shell's `ConnectionMonitor`): every session opened over it ends with it, so the
    /// session table shrinks as peers leave and a later connection with the same routing id inherits nothing.
    public mutating func onConnectionEnded(_ connection: Int32) {
        guard connection >= 0 else { return }
        for (id, session) in sessions where session.connection == connection { sessions[id] = nil }
    }

    /// A reply to a device, delayed by the fault plan when it says so (each delay is an injected fault):
    /// `replyDelayMs` for every reply, and `slowedByMs` more for this one (a pull's page: `slowPullMs`).
    mutating func reply(_ peer: Peer, _ message: Message, slowedByMs slow: Int = 0) -> [ServerDirective] {
        guard faults.replyDelayMs > 0 || slow > 0 else { return [.reply(to: peer, message: message, delayMs: 0)] }
        var out: [ServerDirective] = []
        for (kind, delayMs) in [("replyDelay", faults.replyDelayMs), ("slowPull", slow)] where delayMs > 0 {
            stats.faultsInjected += 1
            var fields: [(String, JSONValue)] = [("kind", .string(kind))]
            if let device = session(of: peer)?.device { fields.append(("device", .string(device))) }
            fields.append(("delayMs", .int(delayMs)))
            out.append(.log(EventLine(.faultInjected, fields)))
        }
        return out + [.reply(to: peer, message: message, delayMs: faults.replyDelayMs + slow)]
    }

    /// How many sessions are held at most, now.
    var capacity: Int { sessionCapacity ?? max(4096, 2 * directory.count) }

    mutating func open(_ session: Session, for peer: Peer) {
        sessions[peer.routingID] = session
        if sessions.count > capacity,
            let oldest = sessions.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            sessions[oldest] = nil
        }
    }

    /// The peer's session, marked as just used.
    mutating func touch(_ peer: Peer) -> Session? {
        guard var session = sessions[peer.routingID], session.user == peer.user,
              session.connection == peer.connection
        else { return nil }
        session.lastUse = clock
        sessions[peer.routingID] = session
        return session
    }

    /// The `req` of a message the codec refused, when its body is still a JSON object that has one, so the client
    /// can match the error to its request.
    static func requestNumber(in frames: [[UInt8]]) -> Int? {
        guard frames.count == 2, frames[1].count <= Limits.maxBodyBytes, frames[1].first == UInt8(ascii: "{") else {
            return nil
        }
        let object = try? JSONSerialization.jsonObject(with: Data(frames[1])) as? [String: Any]
        return (object?["req"] as? NSNumber).flatMap { Int(exactly: $0.doubleValue) }
    }
}
