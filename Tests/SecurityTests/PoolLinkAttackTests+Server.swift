import Foundation
import LabTestSupport
import SyncProtocol
import Testing

extension PoolLinkAttackTests {
    /// The pool's one server connection (docs/PROTOCOL.md §14). The positive control: over the pool's key, pixel and
    /// iphone each say hello under their own envelope and hold a session of their own; pixel's push is applied and
    /// answered under pixel's envelope. The attacks, changing nothing: frames naming laptop (another account's
    /// device, outside the pool's set, with laptop's right token), frames with no device frame or one that is no
    /// UTF-8, are refused `unknownDevice` with a bounded number of `request.refused` lines however many come; a
    /// device inside the pool reads only its own account; a hello under pixel's envelope claiming laptop is refused
    /// (the envelope, bound to the key, says who speaks), and ends only pixel's session, not iphone's.
    static func serverSide(_ lab: SecureLab) throws {
        let pool = try lab.serverClient(pair: lab.keys[SecureLab.pool]!)
        for device in SecureLab.pooled {
            let spec = SecureLab.devices.first { $0.id == device }!
            let answer = try Self.request(pool, device, .hello(Hello(device: device, account: spec.account,
                                                                     token: SecureLab.token(device),
                                                                     platform: spec.platform)))
            guard let (envelope, reply) = answer, case .welcome = reply else {
                let log = lab.log("server")
                Issue.record("the pool could not say hello as \(device): \(String(describing: answer))\n\(log)")
                return
            }
            #expect(envelope == Self.envelope(device))
        }
        let pushed = try Self.request(pool, "pixel", .push(Push(req: 1, ops: [SecureLab.op("pool-op-1")])))
        #expect(pushed?.0 == Self.envelope("pixel"))
        guard case .pushResult(let result)? = pushed?.1 else {
            Issue.record("no pushResult for pixel's push: \(String(describing: pushed))")
            return
        }
        #expect(result.results.map(\.key) == ["pool-op-1"] && result.results.map(\.outcome) == [.applied])
        let foreign = try Self.request(pool, "iphone", .pull(Pull(req: 2, cursor: 0, limit: 10, account: "globex")))
        #expect(foreign?.0 == Self.envelope("iphone"))
        expectError(foreign?.1, .wrongAccount)
        let flood = 500
        try lab.expectUnchanged {
            let hello = try Self.request(pool, "laptop", .hello(Hello(device: "laptop", account: "globex",
                                                                      token: SecureLab.token("laptop"),
                                                                      platform: .web)))
            #expect(hello?.0 == Self.envelope("laptop"))
            expectError(hello?.1, .unknownDevice)
            if case .error(let error)? = hello?.1 {
                #expect(error.message.contains("pool \"\(SecureLab.pool)\"") && error.message.contains("laptop"))
            }
            for n in 0..<flood {
                try pool.sendRaw([Self.envelope("laptop")]
                    + Codec.encode(.push(Push(req: 10 + n, ops: [SecureLab.op("laptop-op-\(n)")]))))
            }
            try pool.sendRaw(Codec.encode(.push(Push(req: 9, ops: [SecureLab.op("no-envelope")]))))
            try pool.sendRaw([[0xFF, 0xFE]] + Codec.encode(.push(Push(req: 8, ops: [SecureLab.op("not-utf8")]))))
            var answered = 0
            while let frames = try pool.receiveFrames(timeoutMs: silenceMs) {
                #expect(frames.count >= 2 && !SecureLab.pooled.map(Self.envelope).contains(frames[0]),
                        "an answer under a pooled device's name")
                answered += 1
            }
            #expect(answered > 0 && answered <= flood + 2)
        }
        let refused = lab.events(lab.serverEvents, type: "request.refused")
            .filter { $0["code"]?.stringValue == "unknownDevice" }
        // RefusalLimiter: 20 lines a second for one peer; the flood took at most a few seconds.
        #expect(!refused.isEmpty && refused.count <= 100, "\(refused.count) refusal lines for \(flood + 3) frames")
        #expect(lab.events(lab.serverEvents, type: "hello.accepted").compactMap { $0["device"]?.stringValue }
            .sorted() == ["iphone", "pixel"], "only the pool's own devices said hello")
        // Under pixel's envelope the key speaks for pixel only: a hello claiming laptop is refused, with laptop's
        // right token, and ends pixel's session; iphone's session on the same connection is its own.
        let claim = try Self.request(pool, "pixel", .hello(Hello(device: "laptop", account: "globex",
                                                                 token: SecureLab.token("laptop"), platform: .web)))
        expectError(claim?.1, .badToken)
        expectError(try Self.request(pool, "pixel", .pull(Pull(req: 3, cursor: 0, limit: 10)))?.1, .notAuthenticated)
        guard case .page(let page)? = try Self.request(pool, "iphone", .pull(Pull(req: 4, cursor: 0, limit: 10)))?.1
        else {
            Issue.record("iphone lost its session with pixel's")
            return
        }
        #expect(page.changes.count == 1, "iphone reads acme's one change, pixel's push")
    }
}
