import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// The one device-protocol client: which reply each matching takes, and what a reconnect keeps.
@Suite struct TestClientTests {
    static let stale = Message.pushResult(PushResult(req: 6, results: []))
    static let reqless = Message.welcome(Welcome(device: "pixel", account: "acme", head: 0))
    static let own = Message.pushResult(PushResult(req: 7, results: []))

    @Test func eachMatchingTakesItsReplies() {
        let table: [(TestClient.ReplyMatching, wanted: Int?, takes: [Bool])] = [
            // wanted, then: a reply to another request, a reply without req, the reply to this request.
            (.strict, 7, [false, false, true]),
            (.strict, nil, [false, true, false]),
            (.skipMismatched, 7, [false, true, true]),
            (.skipMismatched, nil, [true, true, true]),
            (.none, 7, [true, true, true]),
        ]
        for (matching, wanted, takes) in table {
            let got = [Self.stale, Self.reqless, Self.own].map { matching.accepts($0, wanted: wanted) }
            #expect(got == takes, "\(matching) wanting \(String(describing: wanted))")
        }
    }

    /// A peer that answers the push with a stale result, a req-less welcome and the push's own result, in that
    /// order: each matching's request returns the one it takes, on real sockets.
    @Test(arguments: [(.strict, 7), (.skipMismatched, nil), (.none, 6)] as [(TestClient.ReplyMatching, Int?)])
    func aRequestSkipsWhatItsMatchingPassesOver(_ matching: TestClient.ReplyMatching, _ expected: Int?) throws {
        let context = try Context()
        let router = try Socket(context, .router)
        let endpoint = "inproc://test-client-\(UUID().uuidString)"
        try router.bind(endpoint)
        let client = try TestClient(context, endpoint: endpoint, options: .init(
            reconnectMs: 10, sendMode: .blocking, replyMatching: matching))
        try client.send(.push(Push(req: 7, ops: [])))
        let request = try #require(try router.receive(timeoutMs: 5_000))
        for reply in [Self.stale, Self.reqless, Self.own] { try router.send([request[0]] + Codec.encode(reply)) }
        let reply = try #require(try client.reply(to: 7, timeoutMs: 5_000))
        #expect(TestClient.req(of: reply) == expected, "\(reply)")
        // What it passed over is gone; what came after stays for the next read.
        let rest = try [client.receive(timeoutMs: 100), client.receive(timeoutMs: 100)].compactMap { $0 }
        #expect(rest.count == [.strict: 0, .skipMismatched: 1, .none: 2][matching])
    }

    @Test func aReconnectIsANewPeerUnlessTheRoutingIDIsTheTests() throws {
        let context = try Context()
        let router = try Socket(context, .router)
        // The same routing id again takes the old connection's place rather than being refused while that one goes.
        try router.setRouterHandover(true)
        let endpoint = "inproc://test-client-\(UUID().uuidString)"
        try router.bind(endpoint)
        func peers(_ client: TestClient) throws -> [[UInt8]] {
            try (0..<2).map { round in
                if round == 1 { try client.reconnect() }
                try client.sendRaw([Array("x".utf8)])
                return try #require(try router.receive(timeoutMs: 5_000))[0]
            }
        }
        let fresh = try peers(try TestClient(context, endpoint: endpoint))
        #expect(fresh[0] != fresh[1])
        let fixed = try peers(try TestClient(context, endpoint: endpoint, options: .init(
            reconnectMs: nil, sendMode: .dontWait, replyMatching: .none, routingID: Array("pixel-1".utf8))))
        #expect(fixed == [Array("pixel-1".utf8), Array("pixel-1".utf8)])
    }
}
