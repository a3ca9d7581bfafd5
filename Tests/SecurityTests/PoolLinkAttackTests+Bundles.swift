import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

extension PoolLinkAttackTests {
    /// A pool's bundled pulls on its server connection (docs/PROTOCOL.md §15), after `serverSide` (acme has one
    /// change), on a connection of its own. The positive control: pixel and iphone say hello, pull in one bundle and
    /// get their pages in one bundle, each under its own device and with its own `req`; a bundle naming laptop
    /// (outside the pool) gets laptop's pull refused `unknownDevice` under laptop's envelope while pixel's is
    /// answered. The attacks, each
    /// refused whole with a `badBundle` refusal and an error under an empty envelope, changing nothing: a bundle
    /// carrying a push, one cut short, one with more entries than the pool has devices, one with an empty device.
    static func bundleSide(_ lab: SecureLab) throws {
        let pool = try lab.serverClient(pair: lab.keys[SecureLab.pool]!)
        for device in SecureLab.pooled {
            let spec = SecureLab.devices.first { $0.id == device }!
            guard case .welcome? = try Self.request(pool, device, .hello(Hello(
                device: device, account: spec.account, token: SecureLab.token(device), platform: spec.platform)))?.1
            else {
                Issue.record("\(device) could not say hello\n\(lab.log("server"))")
                return
            }
        }
        let both = try Self.bundle([("pixel", .pull(Pull(req: 20, cursor: 0, limit: 10))),
                                    ("iphone", .pull(Pull(req: 21, cursor: 0, limit: 10)))])
        try pool.sendRaw(both)
        let replies = try pool.receiveFrames(timeoutMs: 5_000) ?? []
        let bundled = MessageBundle.isBundle(replies)
        #expect(bundled, "two pulls in one bundle are answered in one: \(replies.count) frames")
        if bundled {
            let entries = try MessageBundle.decode(replies[2], maxEntries: 2)
            #expect(entries.map { String(decoding: $0.device, as: UTF8.self) } == ["pixel", "iphone"])
            let pages = try entries.map { try Codec.decode([$0.header, $0.body]) }
            for (page, req) in zip(pages, [20, 21]) {
                guard case .page(let body) = page else {
                    Issue.record("not a page: \(page)")
                    continue
                }
                #expect(body.req == req && body.changes.count == 1, "each device its own req and acme's one change")
            }
        }
        try pool.sendRaw(try Self.bundle([("laptop", .pull(Pull(req: 22, cursor: 0, limit: 10))),
                                          ("pixel", .pull(Pull(req: 23, cursor: 0, limit: 10)))]))
        var answers: [String: Message] = [:]
        while answers.count < 2, let frames = try pool.receiveFrames(timeoutMs: 5_000), frames.count == 3 {
            answers[String(decoding: frames[0], as: UTF8.self)] = try Codec.decode(Array(frames.dropFirst()))
        }
        expectError(answers["laptop"], .unknownDevice)
        guard case .page(let page)? = answers["pixel"] else {
            Issue.record("pixel's pull beside laptop's was not answered: \(answers)")
            return
        }
        #expect(page.req == 23)
        try expectBundlesRefused(lab, pool)
        try expectRepliesBoundedLikeAPage(lab, pool)
    }

    /// Replies to a bundle go back in bundles no larger than a page may be (`Limits.maxBodyBytes`): two pages of
    /// ≈ 640 KB each (ten drafts of 60 KiB) leave as two messages, each under the bound, and both arrive whole.
    static func expectRepliesBoundedLikeAPage(_ lab: SecureLab, _ pool: TestClient) throws {
        let body = String(repeating: "x", count: 60 * 1024)
        for batch in 0..<2 {
            let ops = (0..<5).map { n in
                Op(key: "big-\(batch)-\(n)", draft: "big-\(batch)-\(n)", action: .create, base: 0, title: "t",
                   body: body)
            }
            guard case .pushResult? = try Self.request(pool, "pixel", .push(Push(req: 40 + batch, ops: ops)))?.1 else {
                Issue.record("the large drafts were not pushed\n\(lab.log("server"))")
                return
            }
        }
        try pool.sendRaw(try Self.bundle([("pixel", .pull(Pull(req: 50, cursor: 1, limit: 10))),
                                          ("iphone", .pull(Pull(req: 51, cursor: 1, limit: 10)))]))
        var pages: [String: Int] = [:]
        var largest = 0
        while pages.count < 2, let frames = try pool.receiveFrames(timeoutMs: 5_000) {
            largest = max(largest, frames.last?.count ?? 0)
            let entries = MessageBundle.isBundle(frames)
                ? try MessageBundle.decode(frames[2], maxEntries: 2)
                : [MessageBundle.Entry(device: frames[0], header: frames[1], body: frames[2])]
            for entry in entries {
                if case .page(let page) = try Codec.decode([entry.header, entry.body]) {
                    pages[String(decoding: entry.device, as: UTF8.self)] = page.changes.count
                }
            }
        }
        #expect(pages == ["pixel": 10, "iphone": 10], "both pages of ten large drafts arrived: \(pages)")
        #expect(largest > 600_000 && largest <= Limits.maxBodyBytes + 64 * 1024,
                "the largest reply frame is \(largest) bytes: a bundle weighs no more than a page may")
    }

    /// The attacks of `bundleSide`: each bundle refused whole, an error under an empty envelope, nothing changed.
    static func expectBundlesRefused(_ lab: SecureLab, _ pool: TestClient) throws {
        let pull = try bundleEntry("pixel", .pull(Pull(req: 30, cursor: 0, limit: 10)))
        let push = try bundleEntry("pixel", .push(Push(req: 31, ops: [SecureLab.op("bundled-push")])))
        func frame(_ entries: [MessageBundle.Entry]) -> [UInt8] {
            MessageBundle.encode(entries, maxBytes: 1 << 20)[0].frame
        }
        let valid = frame([pull, pull])
        let attacks: [(String, [UInt8])] = [
            ("a push in a bundle", frame([pull, push])),
            ("a bundle cut short", Array(valid.dropLast(3))),
            ("more entries than the pool has devices", frame([pull, pull, pull])),
            ("an empty device frame", [0, 0, 0, 0] + Array(valid.dropFirst(4 + 5))),
        ]
        try lab.expectUnchanged {
            for (attack, frame) in attacks {
                try pool.sendRaw([[], MessageBundle.header, frame])
                let reply = try pool.receiveFrames(timeoutMs: 5_000)
                #expect(reply?.first == [], "\(attack): the error comes under an empty envelope")
                let message = reply.flatMap { try? Codec.decode(Array($0.dropFirst())) }
                expectError(message, .malformed)
                if case .error(let error)? = message { #expect(error.message.contains("bundle refused"), "\(attack)") }
            }
            #expect(try pool.receiveFrames(timeoutMs: silenceMs) == nil, "nothing of a refused bundle was answered")
        }
        let refused = lab.events(lab.serverEvents, type: "request.refused")
            .filter { $0["code"]?.stringValue == "badBundle" }
        #expect(refused.count == attacks.count, "one refusal line a bundle: \(refused.count)")
    }

    static func bundleEntry(_ device: String, _ message: Message) throws -> MessageBundle.Entry {
        let frames = Codec.encode(message)
        return MessageBundle.Entry(device: Self.envelope(device), header: frames[0], body: frames[1])
    }

    static func bundle(_ messages: [(String, Message)]) throws -> [[UInt8]] {
        let entries = try messages.map { try bundleEntry($0.0, $0.1) }
        return [[], MessageBundle.header, MessageBundle.encode(entries, maxBytes: 1 << 20)[0].frame]
    }

    /// The broker's side of bundles (docs/PROTOCOL.md §16), after `brokerSide` registered pixel through the pool: with
    /// iphone registered through it too, one notice's two hints reach the pool as one bundle of two hint entries,
    /// each under its own device, and the broker's `hint.delivered` lines say both were delivered.
    static func expectHintsBundled(_ lab: SecureLab, _ pool: TestClient, _ server: Socket) throws {
        guard case .registered? = try Self.request(pool, "iphone", .register(Register(
            device: "iphone", account: "acme", platform: .ios, token: SecureLab.token("iphone"))))?.1 else {
            Issue.record("the pool could not register iphone\n\(lab.log("broker"))")
            return
        }
        _ = try server.send(Codec.encode(.notice(Notice(account: "acme", head: 2, origin: "elsewhere",
            changes: [ChangeRef(seq: 2, draft: "d1", version: 2)]))))
        let frames = try pool.receiveFrames(timeoutMs: 5_000) ?? []
        guard MessageBundle.isBundle(frames) else {
            Issue.record("the notice's two hints did not come as one bundle: \(frames.count) frames")
            return
        }
        let entries = try MessageBundle.decode(frames[2], maxEntries: 2, only: MessageBundle.hintHeader)
        #expect(Set(entries.map { String(decoding: $0.device, as: UTF8.self) }) == ["pixel", "iphone"])
        for entry in entries {
            guard case .hint(let hint) = try Codec.decode([entry.header, entry.body]) else {
                Issue.record("not a hint: \(entry)")
                continue
            }
            #expect(hint.account == "acme" && hint.head == 2)
        }
        // The broker writes its `hint.delivered` lines after the bundle left: read until they are there (5 s at most).
        var delivered: Set<String> = []
        for _ in 0..<100 where delivered.count < 2 {
            delivered = Set(lab.events(lab.brokerEvents, type: "hint.delivered").filter { $0["head"]?.intValue == 2 }
                .compactMap { $0["device"]?.stringValue })
            if delivered.count < 2 { usleep(50_000) }
        }
        #expect(delivered == ["pixel", "iphone"])
    }
}
