import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// Talks to one process's control socket: a DEALER that sends `control` and waits for the matching `controlAck`.
/// It reconnects by itself after the process restarts; a late ack of an earlier request is skipped by its `req`.
package final class ControlClient {
    let name: String
    let endpoint: String
    private let socket: Socket
    private var nextRequest = 1

    /// `curve`: the launcher's key pair and the target's public key (its control socket admits only that pair).
    package init(context: Context, name: String, endpoint: String, curve: (CurveKeyPair, String)? = nil) throws {
        self.name = name
        self.endpoint = endpoint
        socket = try Socket(context, .dealer)
        try socket.setRandomRoutingID()
        if let (own, server) = curve { try socket.setCurveClient(own, serverKey: server) }
        try socket.setReconnectInterval(ms: 20)
        try socket.setImmediate(true)
        try socket.connect(endpoint)
    }

    /// Sends `command` and waits up to `timeoutMs` for its ack. Throws when the process does not answer in time, or
    /// (with `alive`) as soon as it has exited: a process armed to crash may die while carrying the command out.
    func call(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = 5_000,
              alive: (() -> Bool)? = nil) throws -> ControlAck {
        let req = nextRequest
        nextRequest += 1
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        guard try send(Codec.encode(.control(Control(req: req, command: command, args: args))), until: deadline) else {
            throw LabError.io("\(name) did not accept control \"\(command)\" within \(timeoutMs) ms (\(endpoint))")
        }
        var poller = Poller([socket])
        while true {
            let now = SimClock.monotonicNanos()
            guard now < deadline else {
                throw LabError.io("\(name) did not answer control \"\(command)\" within \(timeoutMs) ms")
            }
            let left = Int((deadline - now) / 1_000_000) + 1
            let ready = try poller.poll(timeoutMs: alive == nil ? left : min(left, 20))
            if ready.isEmpty, let alive, !alive() {
                throw LabError.io("\(name) exited before answering control \"\(command)\"")
            }
            guard !ready.isEmpty else { continue }
            while let frames = try socket.receive(dontWait: true) {
                switch Codec.decodeOrReply(frames) {
                case .success(.controlAck(let ack)) where ack.req == req:
                    return ack
                case .success(.error(let error)) where error.req == req || error.req == nil:
                    throw LabError.io("\(name) refused control \"\(command)\": \(error.code.rawValue): \(error.message)")
                default:
                    continue  // a stale ack of an earlier request that timed out
                }
            }
        }
    }

    /// Sends `command` without waiting for its ack (trying for up to `timeoutMs` to reach a live connection); false
    /// when it could not be sent. For `stop`: the process's exit is the answer that matters, and an ack can be lost
    /// when the process closes its socket right after it (a DEALER with `immediate` drops what it has not read yet
    /// when its peer disconnects).
    @discardableResult
    func post(_ command: String, timeoutMs: Int = 200) -> Bool {
        let req = nextRequest
        nextRequest += 1
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        return (try? send(Codec.encode(.control(Control(req: req, command: command, args: [:]))), until: deadline)) ?? false
    }

    /// With `immediate`, a send waits for a live connection: retries until `deadline` while the peer starts.
    private func send(_ frames: [[UInt8]], until deadline: UInt64) throws -> Bool {
        while true {
            if try socket.send(frames, dontWait: true) { return true }
            guard SimClock.monotonicNanos() < deadline else { return false }
            usleep(2_000)
        }
    }

    /// Waits until the process answers `ping`.
    package func waitReady(timeout: Double, alive: () -> Bool) throws {
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
}
