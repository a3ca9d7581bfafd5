import Foundation
import LabKit
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// No input an admitted peer can send reaches an assertion or a crash: every socket of a real server and broker
/// (devices with a device's key, control with the launcher's, notices with the server's) takes a seeded stream of
/// malformed messages — random frames, valid messages with bytes flipped, cut or repeated — and both processes still
/// answer and serve afterwards.
@Suite struct FuzzedInputTests {
    /// Valid messages of every kind a peer sends, as the starting points of mutations.
    static let seeds: [[[UInt8]]] = [
        Codec.encode(.hello(Hello(device: "pixel", account: "acme", token: "t-pixel", platform: .android))),
        Codec.encode(.pull(Pull(req: 1, cursor: 0, limit: 100, account: nil))),
        Codec.encode(.push(Push(req: 2, ops: [SecureLab.op("fuzz-1")]))),
        Codec.encode(.register(Register(device: "pixel", account: "acme", platform: .android, token: "t-pixel"))),
        [Array("SL1 deviceState".utf8), Array("{\"device\":\"pixel\",\"state\":\"foreground\"}".utf8)],
        [Array("SL1 notice".utf8), Array("{\"account\":\"acme\",\"head\":3}".utf8)],
        [Array("SL1 control".utf8), Array("{\"command\":\"stats\",\"args\":{}}".utf8)],
        SecureLab.errorFrames(decodable: true),
    ]

    /// One malformed message drawn from `generator`.
    static func message(_ generator: inout SeededGenerator) -> [[UInt8]] {
        var frames = seeds[Int(generator.next() % UInt64(seeds.count))]
        switch generator.next() % 6 {
        case 0:  // random frames
            let count = 1 + Int(generator.next() % 4)
            frames = (0..<count).map { _ in
                (0..<Int(generator.next() % 48)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
        case 1:  // flipped bytes
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let f = Int(generator.next() % UInt64(frames.count))
                guard !frames[f].isEmpty else { continue }
                let at = Int(generator.next() % UInt64(frames[f].count))
                frames[f][at] = UInt8.random(in: 0...255, using: &generator)
            }
        case 2:  // cut short
            let f = Int(generator.next() % UInt64(frames.count))
            frames[f] = Array(frames[f].prefix(Int(generator.next() % UInt64(frames[f].count + 1))))
        case 3:  // a frame repeated or dropped
            if generator.next() % 2 == 0 { frames.append(frames[0]) } else { frames.removeLast() }
            if frames.isEmpty { frames = [[]] }
        case 4:  // deep or odd JSON
            let depth = Int(generator.next() % 200)
            frames[frames.count - 1] = Array((String(repeating: "[", count: depth) + "1e999999"
                + String(repeating: "]", count: depth)).utf8)
        default:  // an empty delimiter in front
            frames.insert([], at: 0)
        }
        return frames
    }

    @Test func seededMalformedMessagesToEverySocketCrashNothing() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            var generator = SeededGenerator(seed: 27)
            let targets: [(String, TestClient)] = [
                ("server devices", try lab.serverClient(as: "pixel")),
                ("broker devices", try lab.brokerClient(as: "pixel")),
                ("server control", try lab.client(lab.serverControl, pair: lab.keys["launcher"],
                                                  serverKey: lab.keys["server"]!.publicKey)),
                ("broker control", try lab.client(lab.brokerControl, pair: lab.keys["launcher"],
                                                  serverKey: lab.keys["broker"]!.publicKey)),
            ]
            let notices = try lab.noticeSender(pair: lab.keys["server"])
            for round in 0..<300 {
                for (_, client) in targets {
                    let frames = Self.message(&generator)
                    // Never a real `stop` or `crashAt` on control: those end a process on purpose.
                    let text = String(decoding: frames.joined(), as: UTF8.self)
                    if text.contains("stop") || text.contains("crash") { continue }
                    try client.sendRaw(frames)
                    _ = try client.receiveFrames(timeoutMs: round % 50 == 0 ? 1_000 : 0)
                }
                _ = try notices.send(Self.message(&generator), dontWait: true)
            }
            // Each socket still answers, so each has read (and survived) what came before on its connection.
            let server = try lab.launcher(lab.serverControl, serverKey: "server")
            let broker = try lab.launcher(lab.brokerControl, serverKey: "broker")
            #expect(try server.ack("ping", timeoutMs: 10_000)?.ok == true, "the server: \(lab.log("server"))")
            #expect(try broker.ack("ping", timeoutMs: 10_000)?.ok == true, "the broker: \(lab.log("broker"))")
            #expect(lab.serverAlive && lab.brokerAlive)
            // The stream reached the decoders (not stopped by libzmq before them).
            let refused = try server.ack("stats", timeoutMs: 10_000)?.data?["refused"]?.intValue ?? 0
            #expect(refused >= 200, "the server refused only \(refused) messages")
            #expect(lab.events(lab.brokerEvents, type: "request.refused").count >= 20)
            guard case .page? = try lab.helloed("iphone").pull() else {
                Issue.record("the server does not serve after the fuzzing")
                return
            }
            _ = try lab.registered("iphone")
        }
    }
}
