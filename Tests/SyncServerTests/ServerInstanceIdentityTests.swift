import Foundation
import LabTestSupport
import LabKit
import SyncProtocol
import Testing

@testable import SyncServer

/// The instance's identity rules with CURVE (pure logic; the real sockets are in SecurityTests): a session belongs to
/// the key's device and its connection, ends with the connection, and errors are bounded and never answered.
@Suite("ServerInstance identity")
struct ServerInstanceIdentityTests {
    static let devices = [
        DeviceRecord(id: "pixel", account: "acme", platform: .android, token: TokenHash.stored("t-pixel")),
        DeviceRecord(id: "laptop", account: "globex", platform: .web, token: TokenHash.stored("t-laptop")),
    ]

    func makeInstance() -> ServerInstance { ServerInstance(devices: Self.devices, heads: ["acme": 0], seed: 1) }

    func errorCode(_ directives: [ServerDirective]) -> ErrorCode? {
        for directive in directives {
            if case .reply(_, .error(let reply), _) = directive { return reply.code }
        }
        return nil
    }

    func hello(_ instance: inout ServerInstance, _ peer: Peer, device: String = "pixel") -> [ServerDirective] {
        instance.onDeviceMessage(from: peer, frames: Codec.encode(.hello(Hello(
            device: device, account: device == "pixel" ? "acme" : "globex", token: "t-\(device)",
            platform: device == "pixel" ? .android : .web))))
    }

    func pull(_ instance: inout ServerInstance, _ peer: Peer) -> [ServerDirective] {
        instance.onDeviceMessage(from: peer, frames: Codec.encode(.pull(Pull(req: 1, cursor: 0, limit: 10))))
    }

    /// The server checks a hello's platform against the accounts file, as the broker does at register.
    @Test func helloWhosePlatformContradictsTheAccountsFileIsRefused() {
        var instance = makeInstance()
        let peer = Peer(routingID: [3], user: "pixel", connection: 9)
        let directives = instance.onDeviceMessage(from: peer, frames: Codec.encode(.hello(Hello(
            device: "pixel", account: "acme", token: "t-pixel", platform: .ios))))
        #expect(errorCode(directives) == .invalid)
        #expect(instance.session(of: peer) == nil)
    }

    @Test func helloMustNameTheKeysDevice() {
        var instance = makeInstance()
        let laptopKey = Peer(routingID: [1], user: "laptop", connection: 7)
        #expect(errorCode(hello(&instance, laptopKey, device: "pixel")) == .badToken)
        #expect(instance.sessions.isEmpty)
        #expect(errorCode(hello(&instance, laptopKey, device: "laptop")) == nil)
        #expect(instance.session(of: laptopKey)?.device == "laptop")
    }

    @Test func aSessionIsTheKeysAndTheConnectionsNotTheRoutingIDs() {
        var instance = makeInstance()
        let pixel = Peer(routingID: [1], user: "pixel", connection: 7)
        _ = hello(&instance, pixel)
        // The same routing id from another key, or over another connection, is not in the session.
        #expect(errorCode(pull(&instance, Peer(routingID: [1], user: "laptop", connection: 7))) == .notAuthenticated)
        #expect(errorCode(pull(&instance, Peer(routingID: [1], user: "pixel", connection: 8))) == .notAuthenticated)
        #expect(errorCode(pull(&instance, pixel)) == nil)
    }

    @Test func aSessionEndsWithItsConnection() {
        var instance = makeInstance()
        let pixel = Peer(routingID: [1], user: "pixel", connection: 7)
        _ = hello(&instance, pixel)
        _ = hello(&instance, Peer(routingID: [2], user: "laptop", connection: 9), device: "laptop")
        instance.onConnectionEnded(7)
        #expect(instance.sessions.count == 1)
        #expect(errorCode(pull(&instance, pixel)) == .notAuthenticated)
    }

    @Test func anErrorIsLoggedNotAnswered() {
        var instance = makeInstance()
        let peer = Peer(routingID: [1])
        for body in [Codec.encode(.error(ErrorReply(code: .invalid, message: "x")))[1], Array("{".utf8)] {
            let directives = instance.onDeviceMessage(from: peer, frames: [Array("SL1 error".utf8), body])
            #expect(errorCode(directives) == nil)
            #expect(directives.contains { directive in
                if case .log(let e) = directive { return e.type == "request.refused" }
                return false
            })
        }
    }

    @Test func errorMessagesQuoteAShortPrefix() {
        var instance = makeInstance()
        let pixel = Peer(routingID: [1])
        _ = hello(&instance, pixel)
        let long = String(repeating: "é", count: 5_000)
        let directives = instance.onDeviceMessage(from: pixel, frames: Codec.encode(.pull(Pull(
            req: 1, cursor: 0, limit: 10, account: long))))
        guard case .reply(_, .error(let reply), _)? = directives.first(where: {
            if case .reply = $0 { return true }; return false
        }) else {
            Issue.record("no error")
            return
        }
        #expect(reply.message.utf8.count <= ServerInstance.maxMessageBytes)
        #expect(reply.message.contains("bytes)"))
    }
}

extension ServerInstanceIdentityTests {
    /// A pool's connection (docs/PROTOCOL.md §14) as the shell hands it in: each device it speaks for is a virtual
    /// peer of its own (`PooledPeers`) whose user is that device, so two devices hold two sessions on one connection,
    /// a hello naming another device under a device's envelope is refused, and the connection's end ends both.
    @Test func pooledDevicesAreSessionsOfTheirOwnAndEndWithTheirConnection() {
        var instance = makeInstance()
        var pooled = PooledPeers(members: ["pool-1": ["pixel", "laptop"]])
        func peer(_ device: String) -> Peer {
            guard case let .device(user, virtual, _) = pooled.admit([Array(device.utf8), [1]], peer: [7, 7],
                                                                   pool: "pool-1", connection: 5)
            else { return Peer(routingID: []) }
            return Peer(routingID: virtual, user: user, connection: 5)
        }
        _ = hello(&instance, peer("pixel"))
        _ = hello(&instance, peer("laptop"), device: "laptop")
        #expect(instance.sessions.count == 2)
        #expect(instance.session(of: peer("pixel"))?.account == "acme")
        #expect(instance.session(of: peer("laptop"))?.account == "globex")
        // Under pixel's envelope the key speaks for pixel: a hello as laptop, with laptop's token, is refused.
        #expect(errorCode(hello(&instance, peer("pixel"), device: "laptop")) == .badToken)
        #expect(instance.session(of: peer("laptop")) != nil, "laptop's session is its own")
        _ = hello(&instance, peer("pixel"))
        #expect(instance.sessions.count == 2)
        instance.onConnectionEnded(5)
        pooled.ended(5)
        #expect(instance.sessions.isEmpty && pooled.routes.isEmpty)
    }
}
