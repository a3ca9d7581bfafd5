import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// How one control request ended.
public enum ControlOutcome: Sendable {
    /// The process acknowledged it (`ok` false: it refused the command, `detail` says why).
    case ack(ControlAck)
    /// The process answered with an error frame (malformed, unauthorized, …).
    case error(ErrorReply)
    /// No live connection took the request within the time allowed (nobody listens, or the handshake failed).
    case unsent
    /// Sent, but no answer came in time.
    case unanswered
    /// The process exited before it answered (`alive` said so).
    case exited
}

/// The lab's one control client: a DEALER on one process's control socket that sends `control` and waits for the
/// matching `controlAck`. The launcher drives every process with it, `synclab-device control` sends one command by
/// hand with it, and the tests talk to real processes with it. It reconnects by itself after the process restarts;
/// a late ack of an earlier request is skipped by its `req`.
public final class ControlClient {
    public let name: String
    public let endpoint: String
    /// How long a request waits for its answer unless told otherwise.
    public static let defaultTimeoutMs = 5_000
    private let socket: Socket
    private var nextRequest = 1

    /// `curve`: the client's key pair and the target's public key (a control socket under CURVE admits only the
    /// launcher's pair). `name` names the process in errors (default: the endpoint).
    ///
    /// `liveOnly` (the launcher's way): a request is sent only over a live connection, never queued for a process
    /// that is not there, and an answer still unread when the process closes its socket is dropped with the
    /// connection (so the launcher `post`s `stop` and waits for the exit). `liveOnly: false` (a test's way): a request
    /// waits in the queue until the process is up, and an answer survives the process closing its socket right
    /// after it, so the ack of `stop` can be read.
    public init(context: Context, name: String? = nil, endpoint: String, curve: (CurveKeyPair, String)? = nil,
                liveOnly: Bool = true) throws {
        self.name = name ?? endpoint
        self.endpoint = endpoint
        // No routing id of its own: the target's ZAP handler gives each connection one.
        socket = try Socket(context, .dealer)
        if let (own, server) = curve { try socket.setCurveClient(own, serverKey: server) }
        try socket.setReconnectInterval(ms: 20)
        if liveOnly { try socket.setImmediate(true) }
        try socket.connect(endpoint)
    }

    deinit { socket.close() }

    /// Sends `command` and waits up to `timeoutMs` for its answer; with `alive`, stops waiting as soon as the process
    /// has exited (a process armed to crash may die while carrying the command out). Throws only when the socket
    /// fails.
    public func request(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = defaultTimeoutMs,
                        alive: (() -> Bool)? = nil) throws -> ControlOutcome {
        let req = nextRequest
        nextRequest += 1
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        guard try send(Codec.encode(.control(Control(req: req, command: command, args: args))), until: deadline) else {
            return .unsent
        }
        var poller = Poller([socket])
        while true {
            let now = SimClock.monotonicNanos()
            guard now < deadline else { return .unanswered }
            let left = Int((deadline - now) / 1_000_000) + 1
            let ready = try poller.poll(timeoutMs: alive == nil ? left : min(left, 20))
            if ready.isEmpty, let alive, !alive() { return .exited }
            guard !ready.isEmpty else { continue }
            while let frames = try socket.receive(dontWait: true) {
                switch Codec.decodeOrReply(frames) {
                case .success(.controlAck(let ack)) where ack.req == req:
                    return .ack(ack)
                case .success(.error(let error)) where error.req == req || error.req == nil:
                    return .error(error)
                default:
                    continue  // a stale ack of an earlier request that timed out
                }
            }
        }
    }

    /// The ack of `command`; throws when the process answers with an error frame, does not answer in time, or exits
    /// first. An ack with `ok` false is returned: the caller decides what a refusal means.
    public func call(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = defaultTimeoutMs,
                     alive: (() -> Bool)? = nil) throws -> ControlAck {
        let outcome = try request(command, args, timeoutMs: timeoutMs, alive: alive)
        if case .ack(let ack) = outcome { return ack }
        throw failure(outcome, command: command, timeoutMs: timeoutMs)!
    }

    /// What `call` throws for an outcome that is not an ack (nil for an ack).
    public func failure(_ outcome: ControlOutcome, command: String, timeoutMs: Int = defaultTimeoutMs) -> LabError? {
        switch outcome {
        case .ack:
            return nil
        case .error(let error):
            return LabError.io("\(name) refused control \"\(command)\": \(error.code.rawValue): \(error.message)")
        case .unsent:
            return LabError.io("\(name) did not accept control \"\(command)\" within \(timeoutMs) ms (\(endpoint))")
        case .unanswered:
            return LabError.io("\(name) did not answer control \"\(command)\" within \(timeoutMs) ms")
        case .exited:
            return LabError.io("\(name) exited before answering control \"\(command)\"")
        }
    }

    /// Sends `requests` in order, up to `window` of them unanswered at a time, and returns each one's outcome in the
    /// same order: the heal's three commands to each of a pool's 250 devices cost one pool's work, not 750 round
    /// trips (a pool answers its control requests in the order they arrive). `timeoutMs` is how long the client waits
    /// without any answer before the rest are `unanswered` (or `unsent`).
    public func pipeline(_ requests: [(command: String, args: [String: JSONValue])], window: Int = 64,
                         timeoutMs: Int = defaultTimeoutMs) throws -> [ControlOutcome] {
        var outcomes = [ControlOutcome?](repeating: nil, count: requests.count)
        var reqs: [Int: Int] = [:]  // req → index of its request
        var next = 0
        var deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        var poller = Poller([socket])
        while next < requests.count || !reqs.isEmpty {
            while next < requests.count, reqs.count < window {
                let req = nextRequest
                nextRequest += 1
                let (command, args) = requests[next]
                guard try send(Codec.encode(.control(Control(req: req, command: command, args: args))),
                               until: deadline) else { break }
                reqs[req] = next
                next += 1
            }
            let now = SimClock.monotonicNanos()
            guard now < deadline, !reqs.isEmpty else { break }
            guard !(try poller.poll(timeoutMs: Int((deadline - now) / 1_000_000) + 1)).isEmpty else { continue }
            while let frames = try socket.receive(dontWait: true) {
                let answered: (req: Int?, ControlOutcome)
                switch Codec.decodeOrReply(frames) {
                case .success(.controlAck(let ack)): answered = (ack.req, .ack(ack))
                case .success(.error(let error)): answered = (error.req ?? reqs.keys.min(), .error(error))
                default: continue
                }
                guard let req = answered.req, let index = reqs.removeValue(forKey: req) else { continue }
                outcomes[index] = answered.1
                deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
            }
        }
        return outcomes.enumerated().map { index, outcome in outcome ?? (index < next ? .unanswered : .unsent) }
    }

    /// The ack of `command`, or nil when none came (an error frame, no answer in time).
    public func ack(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = defaultTimeoutMs) throws
        -> ControlAck? {
        if case .ack(let ack) = try request(command, args, timeoutMs: timeoutMs) { return ack }
        return nil
    }

    /// Sends `command` without waiting for its ack (trying for up to `timeoutMs` to reach a live connection); false
    /// when it could not be sent. For `stop`: the process's exit is the answer that matters, and an ack can be lost
    /// when the process closes its socket right after it (a DEALER with `immediate` drops what it has not read yet
    /// when its peer disconnects).
    @discardableResult
    public func post(_ command: String, timeoutMs: Int = 200) -> Bool {
        let req = nextRequest
        nextRequest += 1
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        return (try? send(Codec.encode(.control(Control(req: req, command: command, args: [:]))), until: deadline))
            ?? false
    }

    /// With `liveOnly`, a send waits for a live connection: retries until `deadline` while the peer starts.
    private func send(_ frames: [[UInt8]], until deadline: UInt64) throws -> Bool {
        while true {
            if try socket.send(frames, dontWait: true) { return true }
            guard SimClock.monotonicNanos() < deadline else { return false }
            usleep(2_000)
        }
    }

    /// Waits until the process answers `ping`; throws when it exits first (`alive`) or does not answer in time.
    public func waitReady(timeout: Double, alive: () -> Bool = { true }) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: Error?
        while Date() < deadline {
            guard alive() else { throw LabError.io("\(name) exited during start-up (see its log)") }
            do {
                if try call("ping", timeoutMs: 250).ok { return }
            } catch {
                lastError = error
            }
        }
        throw LabError.io("\(name) was not ready after \(Int(timeout)) s: \(lastError.map { "\($0)" } ?? "no answer")")
    }

    /// Whether the process answers `ping` within `timeout` seconds.
    public func isReady(timeout: Double = 20) -> Bool { (try? waitReady(timeout: timeout)) != nil }
}
