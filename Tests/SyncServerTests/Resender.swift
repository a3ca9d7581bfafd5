import Foundation
import LabTestSupport
import SyncProtocol

/// A device's resend loop over a `TestClient`: resends unacknowledged ops with the same keys, reconnecting and saying
/// hello again whenever the server stops answering or has forgotten it. A push takes only the reply to its own
/// attempt (`.strict`): a late result or a stale welcome from an earlier attempt is skipped.
final class Resender {
    let server: ServerProcess
    let client: TestClient
    var authenticated = false
    private(set) var resends = 0
    static let timeoutMs = 400

    init(server: ServerProcess) throws {
        self.server = server
        client = try server.client()
    }

    /// Pushes `ops` until every one is acknowledged (applied or duplicate); `afterFirstSend` runs once, right after
    /// the first attempt went out (the test kills the server there).
    func push(_ ops: [Op], afterFirstSend: (() throws -> Void)? = nil, budgetSeconds: Double = 60) throws
        -> [OpResult]
    {
        var hook = afterFirstSend
        let deadline = Date().addingTimeInterval(budgetSeconds)
        var attempts = 0
        while Date() < deadline {
            if !authenticated {
                guard case .welcome? = try client.hello("pixel", "acme", "t-pixel", timeoutMs: Self.timeoutMs) else {
                    try client.reconnect()
                    continue
                }
                authenticated = true
            }
            let req = client.req()
            try client.send(.push(Push(req: req, ops: ops)))
            attempts += 1
            if attempts > 1 { resends += 1 }
            if let run = hook {
                hook = nil
                try run()
            }
            switch try client.reply(to: req, matching: .strict, timeoutMs: Self.timeoutMs) {
            case .pushResult(let result)?:
                if result.results.allSatisfy({ $0.outcome == .applied || $0.outcome == .duplicate }) {
                    return result.results
                }
            case .error(let error)? where error.code == .notAuthenticated:
                authenticated = false
            case .error(let error)?:
                throw TestFailure.setup("push refused: \(error.message)")
            case nil:
                // Unknown outcome: maybe applied, maybe not. A new connection and a resend with the same keys.
                try client.reconnect()
                authenticated = false
            case .some(let other):
                throw TestFailure.setup("unexpected reply \(other)")
            }
        }
        throw TestFailure.setup("ops not acknowledged within \(budgetSeconds)s: \(server.serverLog)")
    }
}
