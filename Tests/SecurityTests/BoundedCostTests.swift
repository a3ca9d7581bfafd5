import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// What one peer can make the server or the broker spend: error replies quote a short prefix, an `error` is never
/// answered, a client that stops reading pins bounded memory, and a flood of bad frames writes a bounded log.
@Suite struct BoundedCostTests {
    static let huge = String(repeating: "A", count: 200_000)

    /// Over-long fields are answered with a short error that quotes at most a prefix of them.
    @Test(arguments: ["header", "fieldName", "pullAccount", "helloDevice", "opKey"])
    func overLongFieldGetsShortError(_ shape: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let client = try lab.helloed("laptop")
            let frames: [[UInt8]]
            switch shape {
            case "header": frames = [Array("SL1 \(Self.huge)".utf8), Array("{}".utf8)]
            case "fieldName":
                frames = [Array("SL1 pull".utf8), Array("{\"req\":1,\"cursor\":0,\"limit\":1,\"\(Self.huge)\":1}".utf8)]
            case "pullAccount":
                frames = Codec.encode(.pull(Pull(req: 1, cursor: 0, limit: 1, account: Self.huge)))
            case "helloDevice":
                frames = Codec.encode(.hello(Hello(device: Self.huge, account: "globex", token: "t", platform: .web)))
            default:
                frames = Codec.encode(.push(Push(req: 1, ops: [SecureLab.op(Self.huge)])))
            }
            try lab.expectUnchanged {
                try client.sendRaw(frames)
                guard case .error(let error)? = try client.receive(timeoutMs: 5_000) else {
                    Issue.record("no error")
                    return
                }
                #expect(error.message.utf8.count <= 256, "\(error.message.utf8.count) bytes of message")
            }
            let longest = lab.events(lab.serverEvents, type: "request.refused").map { $0.description.utf8.count }.max()
            #expect((longest ?? 0) < 1_024)
        }
    }

    /// An `error` sent to the server is logged, never answered, decodable or not.
    @Test(arguments: [false, true])
    func errorIsNotAnswered(decodable: Bool) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let client = try lab.helloed("pixel")
            try lab.expectUnchanged {
                try client.sendRaw(SecureLab.errorFrames(decodable: decodable))
                #expect(try client.receive(timeoutMs: silenceMs) == nil)
            }
            #expect(lab.eventually { !lab.events(lab.serverEvents, type: "request.refused").isEmpty })
        }
    }

    /// A client that sends pulls of large pages and never reads keeps the server's memory bounded: replies queue up
    /// to a small high-water mark per connection, the rest are dropped (`reply.lost`), so the server's RSS grows by
    /// a few pages, not by every reply (without the bound: 300 × 60 KB, ~18 MB).
    @Test func nonReadingClientKeepsServerMemoryBounded() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let writer = try lab.helloed("pixel")
            let body = String(repeating: "x", count: 60_000)
            let ops = [Op(key: "big-0", draft: "d0", action: .create, base: 0, title: "t", body: body)]
            guard case .pushResult? = try writer.push(ops) else {
                Issue.record("no pushResult")
                return
            }
            let hog = try lab.serverClient(as: "pixel", receiveHWM: 1)
            guard case .welcome? = try hog.hello("pixel", "acme") else {
                Issue.record("no welcome")
                return
            }
            let before = lab.serverRSSKiB
            let pulls = 300
            for req in 0..<pulls {
                _ = try hog.socket.send(Codec.encode(.pull(Pull(req: req, cursor: 0, limit: 100, account: nil))))
            }
            // Every pull handled (served, its reply queued or lost), then the memory it pins.
            #expect(lab.eventually(timeout: 60) { lab.events(lab.serverEvents, type: "pull.served").count >= pulls })
            let after = lab.serverRSSKiB
            #expect(before > 0 && after > 0)
            #expect(after - before < 8_000, "server RSS grew \(after - before) KiB")
            #expect(!lab.events(lab.serverEvents, type: "reply.lost").isEmpty)
            #expect(lab.serverAlive)
        }
    }

    /// A flood of bad frames from one peer writes a bounded number of `request.refused` lines and says how many it
    /// held back (without the limit: one ~300-byte line per frame).
    @Test(arguments: ["server", "broker"])
    func refusalFloodKeepsLogBounded(_ target: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let client = target == "server" ? try lab.serverClient(as: "pixel") : try lab.brokerClient(as: "pixel")
            let path = target == "server" ? lab.serverEvents : lab.brokerEvents
            // Connected and admitted before the flood starts.
            if target == "server" {
                _ = try client.hello("pixel", "acme")
            } else {
                _ = try client.request(.register(Register(device: "pixel", account: "acme", platform: .android,
                                                          token: "t-pixel")))
            }
            let before = lab.fileSize(path)
            let frames = 3_000
            for _ in 0..<frames {
                _ = try client.socket.send([Array("SL1 bogus".utf8), Array("{}".utf8)])
            }
            if target == "server" {
                // The server counts every refusal; its replies to a client that does not read are mostly lost
                // (and those losses are rate-limited lines too).
                let control = try lab.launcher(lab.serverControl, serverKey: "server")
                #expect(lab.eventually(timeout: 60) {
                    ((try? control.ack("stats"))??.data?["refused"]?.intValue ?? 0) >= frames
                }, "the flood was never drained")
            } else {
                // Frames of one connection are handled in order: once a register is answered, the flood has been
                // read. The broker's replies to a client that is not reading stop at its send high-water mark and
                // the rest are dropped (bounded memory), so the first register's answer may be one of them: ask
                // again until one comes back.
                let register = Message.register(Register(device: "pixel", account: "acme", platform: .android,
                                                         token: "t-pixel"))
                let deadline = Date().addingTimeInterval(60)
                var drained = false
                while !drained, Date() < deadline {
                    _ = try client.socket.send(Codec.encode(register))
                    while let reply = try client.receive(timeoutMs: 2_000) {
                        if case .registered = reply {
                            drained = true
                            break
                        }
                    }
                }
                #expect(drained, "the flood was never drained")
            }
            let grown = lab.fileSize(path) - before
            #expect(grown < 150_000, "the log grew \(grown) bytes for \(frames) refused frames")
            #expect(lab.events(path, type: "request.refused").contains { ($0["suppressed"]?.intValue ?? 0) > 0 }
                || grown < 20_000)
        }
    }
}
