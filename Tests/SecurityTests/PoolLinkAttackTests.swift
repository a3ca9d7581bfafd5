import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// A pool's one multiplexed broker connection and its one server connection (docs/PROTOCOL.md §13 and §14), against
/// a real broker and a real server: the pool's key speaks for the devices the accounts file lists under it and for no
/// other, and each device it speaks for holds only its own account.
@Suite struct PoolLinkAttackTests {
    static func envelope(_ device: String) -> [UInt8] { Array(device.utf8) }

    /// Sends `message` under `device`'s envelope and returns the reply's envelope and message.
    static func request(_ client: TestClient, _ device: String, _ message: Message) throws -> ([UInt8], Message)? {
        try client.sendRaw([envelope(device)] + Codec.encode(message))
        guard let frames = try client.receiveFrames(timeoutMs: 5_000), frames.count >= 2 else { return nil }
        return (frames[0], try Codec.decode(Array(frames.dropFirst())))
    }

    /// Both links on one lab (one lab's start-up paid once): the broker's, then the server's.
    @Test func poolKeySpeaksOnlyForItsOwnDevices() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            try Self.brokerSide(lab)
            try Self.serverSide(lab)
            try Self.bundleSide(lab)
        }
    }

    /// The positive control and the attack on the broker: the pool registers pixel and gets pixel's hint under
    /// pixel's envelope; frames naming laptop (another account's device, outside the pool's set, with laptop's right
    /// token) are refused `unknownDevice` under laptop's envelope, register nothing, take none of laptop's hints, and
    /// write a bounded number of `request.refused` lines however many come.
    static func brokerSide(_ lab: SecureLab) throws {
        let pool = try lab.brokerClient(pair: lab.keys[SecureLab.pool]!)
        let registered = try Self.request(pool, "pixel", .register(Register(
            device: "pixel", account: "acme", platform: .android, token: SecureLab.token("pixel"))))
        guard let (envelope, reply) = registered, case .registered = reply else {
            Issue.record(
                "the pool could not register pixel: \(String(describing: registered))\n\(lab.log("broker"))")
            return
        }
        #expect(envelope == Self.envelope("pixel"))
        let laptop = try lab.registered("laptop")
        let flood = 500
        try lab.expectUnchanged {
            let first = try Self.request(pool, "laptop", .register(Register(
                device: "laptop", account: "globex", platform: .web, token: SecureLab.token("laptop"))))
            #expect(first?.0 == Self.envelope("laptop"))
            expectError(first?.1, .unknownDevice)
            if case .error(let error)? = first?.1 {
                #expect(error.message.contains("pool \"\(SecureLab.pool)\"") && error.message.contains("laptop"))
            }
            for _ in 0..<flood {
                try pool.sendRaw([Self.envelope("laptop")] + Codec.encode(.deviceState(DeviceState(
                    device: "laptop", online: false, app: .forceQuit))))
            }
            try pool.sendRaw(Codec.encode(.register(Register(
                device: "iphone", account: "acme", platform: .ios, token: SecureLab.token("iphone")))))
            var answered = 0
            while let frames = try pool.receiveFrames(timeoutMs: silenceMs) {
                #expect(frames.count >= 2 && frames[0] != Self.envelope("pixel"), "an answer under pixel's name")
                answered += 1
            }
            #expect(answered > 0 && answered <= flood + 1)
        }
        #expect(lab.events(lab.brokerEvents, type: "device.registered").compactMap { $0["device"]?.stringValue }
            .sorted() == ["laptop", "pixel"], "only laptop's own key and the pool's pixel registered")
        #expect(lab.events(lab.brokerEvents, type: "device.state").isEmpty)
        let refused = lab.events(lab.brokerEvents, type: "request.refused")
            .filter { $0["code"]?.stringValue == "unknownDevice" }
        // RefusalLimiter: 20 lines a second for one peer; the flood took at most a few seconds.
        #expect(!refused.isEmpty && refused.count <= 100, "\(refused.count) refusal lines for \(flood + 2) frames")
        // laptop still gets its own hint, and the pool none of it.
        let server = try lab.noticeSender(pair: lab.keys["server"]!)
        _ = try server.send(Codec.encode(.notice(Notice(account: "globex", head: 1, origin: "other",
            changes: [ChangeRef(seq: 1, draft: "d1", version: 1)]))))
        guard case .hint? = try laptop.receive(timeoutMs: 5_000) else {
            Issue.record("laptop lost its hint")
            return
        }
        _ = try server.send(Codec.encode(.notice(BrokerAttackTests.notice)))
        guard let hint = try pool.receiveFrames(timeoutMs: 5_000) else {
            Issue.record("no hint for pixel over the pool's connection")
            return
        }
        #expect(hint[0] == Self.envelope("pixel"))
        guard case .hint(let body) = try Codec.decode(Array(hint.dropFirst())) else {
            Issue.record("not a hint")
            return
        }
        #expect(body.account == "acme")
        try expectHintsBundled(lab, pool, server)
    }
}
