import Foundation
import LabTestSupport
import SyncProtocol
import Testing

/// Guessing tokens is throttled per connection and per key, at the server's hello and the broker's register, and
/// both check a device's claim against the same facts of the accounts file.
@Suite struct AuthThrottleTests {
    enum Target: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case server, broker
        var testDescription: String { rawValue }
    }

    /// One attempt as laptop (globex, web) with `token` on `client`: the error's code and message, nil for a welcome.
    /// A reply the server could not queue (its per-connection high-water mark, met by replies sent within a
    /// millisecond) is asked for again: that attempt was counted, which the checks below allow for.
    static func attempt(_ target: Target, _ client: TestClient, token: String) throws -> (ErrorCode, String)? {
        let message: Message = target == .server
            ? .hello(Hello(device: "laptop", account: "globex", token: token, platform: .web))
            : .register(Register(device: "laptop", account: "globex", platform: .web, token: token))
        for _ in 0..<5 {
            switch try client.request(message, timeoutMs: 1_000) {
            case .error(let error)?: return (error.code, error.message)
            case .welcome?, .registered?: return nil
            case nil: continue
            case let other?: throw TestFailure.setup("\(target) answered \(other)")
            }
        }
        throw TestFailure.setup("the \(target) never answered")
    }

    static func client(_ lab: SecureLab, _ target: Target, as device: String) throws -> TestClient {
        target == .server ? try lab.serverClient(as: device) : try lab.brokerClient(as: device)
    }

    /// Refusals for a wrong token the role logged (the throttled ones say "too many" instead).
    static func wrongTokenRefusals(_ lab: SecureLab, _ events: String) -> Int {
        lab.events(events, type: "request.refused").filter {
            let text = $0["message"]?.stringValue ?? ""
            return text.contains("bad token") || text.contains("wrong token for")
        }.count
    }

    @Test(arguments: Target.allCases)
    func wrongTokensAreThrottledPerConnectionAndPerKey(_ target: Target) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let events = target == .server ? lab.serverEvents : lab.brokerEvents
            let guesser = try Self.client(lab, target, as: "laptop")
            let start = Date()
            var throttled = false
            for guess in 0..<30 where !throttled {
                let answer = try Self.attempt(target, guesser, token: "t-guess-\(guess)")
                #expect(answer?.0 == .badToken, "guess \(guess): \(answer as Any)")
                throttled = answer?.1.contains("too many wrong tokens") == true
            }
            #expect(throttled, "30 wrong tokens and never throttled")
            // Past the burst, even the right token is refused unchecked, on this connection and on a new one of the
            // same key, unless a second has passed (one attempt more a second is the rate).
            let right = try Self.attempt(target, guesser, token: SecureLab.token("laptop"))
            let again = try Self.attempt(target, try Self.client(lab, target, as: "laptop"),
                                         token: SecureLab.token("laptop"))
            let elapsed = Date().timeIntervalSince(start)
            if elapsed < 1 {
                #expect(right?.1.contains("too many wrong tokens") == true, "the right token: \(right as Any)")
                #expect(again?.1.contains("too many wrong tokens") == true,
                        "a new connection of the key: \(again as Any)")
            }
            // At most the burst, and one more a second, had their token checked.
            #expect(Self.wrongTokenRefusals(lab, events) <= 5 + Int(elapsed.rounded(.up)))
            #expect(Self.wrongTokenRefusals(lab, events) >= 5)
            // One line per episode, not one per attempt.
            #expect(lab.eventually { !lab.events(events, type: "auth.throttled").isEmpty })
            #expect(lab.events(events, type: "auth.throttled").count <= 1 + Int(elapsed.rounded(.up)))
            // Another key is not held back.
            if target == .server {
                guard case .welcome? = try lab.serverClient(as: "pixel").hello("pixel", "acme") else {
                    Issue.record("pixel could not say hello")
                    return
                }
            } else {
                _ = try lab.registered("pixel")
            }
        }
    }

    /// pixel is android in the accounts file: a hello or a register that claims ios is refused by both roles.
    @Test(arguments: Target.allCases)
    func aClaimedPlatformTheAccountsFileContradictsIsRefused(_ target: Target) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let client = try Self.client(lab, target, as: "pixel")
            let message: Message = target == .server
                ? .hello(Hello(device: "pixel", account: "acme", token: SecureLab.token("pixel"), platform: .ios))
                : .register(Register(device: "pixel", account: "acme", platform: .ios, token: SecureLab.token("pixel")))
            guard case .error(let error)? = try client.request(message) else {
                Issue.record("the \(target) accepted pixel as ios")
                return
            }
            #expect(error.code == .invalid && error.message.contains("android in the accounts file"), "\(error)")
        }
    }
}
