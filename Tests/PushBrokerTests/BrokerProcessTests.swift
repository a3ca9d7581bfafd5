import Foundation
import LabControl
import LabKit
import LabTestSupport
import PushBroker
import SyncProtocol
import Testing
import ZeroMQ

/// The real `synclab-broker` executable over real TCP sockets: the test plays the server (PUSH or PUB to
/// `--notices`), the devices (DEALERs to `--listen`) and the launcher (DEALER to `--control`).
@Suite(.serialized) struct BrokerProcessTests {
    static let origins = ["pixel", "iphone", "laptop", "watch"]

    /// A notice whose origin rotates over `origins` with the head, unless named.
    static func notice(_ head: Int, origin: String? = nil) -> [[UInt8]] {
        let changes = [ChangeRef(seq: head, draft: "d-\(head % 50)", version: head)]
        let origin = origin ?? origins[head % 4]
        return Codec.encode(.notice(Notice(account: "acme", head: head, origin: origin, changes: changes)))
    }

    @Test func accountingHoldsAfterTenThousandNoticesAtThirtyPercentLossAndTwentyPercentDuplicates() async throws {
        try await onOwnThread {
            let broker = try BrokerProcess(
                devices: [("pixel", .android, "t-p"), ("iphone", .ios, "t-i"), ("laptop", .web, "t-l"),
                          ("watch", .ios, "t-w")],
                // No APNs throttle: this test is about chaos and accounting, the throttle has its own tests.
                extra: ["--loss", "0.3", "--duplicate", "0.2", "--hint-hwm", "0", "--seed", "42",
                        "--apns-throttle-per-hour", "0"])
            defer { broker.stop() }
            let context = try Context()
            let launcher = try broker.controlClient(context)
            #expect(try launcher.call("ping", timeoutMs: 10_000).ok)

            let registered: [(String, Platform, String)] = [
                ("pixel", .android, "t-p"), ("iphone", .ios, "t-i"), ("laptop", .web, "t-l"),
            ]
            var devices: [String: TestClient] = [:]
            for (id, platform, token) in registered {
                let peer = try TestClient(context, endpoint: broker.listen,
                                          options: .brokerPeer(routingID: id == "pixel" ? "pixel-1" : nil))
                #expect(try peer.register(id, platform: platform, token: token) == .registered(Registered(device: id)))
                devices[id] = peer
            }

            var received: [String: [Hint]] = [:]
            var wrongShapes: [String] = []
            func drain() throws {
                for (id, peer) in devices {
                    while let frames = try peer.socket.receive(dontWait: true) {
                        guard frames.count == 2, frames[0] == Array("SL1 hint".utf8),
                            let object = try? JSONSerialization.jsonObject(with: Data(frames[1])) as? [String: Any],
                            Set(object.keys) == ["hint", "account", "head"],
                            case .hint(let hint) = try Codec.decode(frames)
                        else {
                            let text = frames.map { String(decoding: $0, as: UTF8.self) }
                            wrongShapes.append(text.joined(separator: " | "))
                            continue
                        }
                        received[id, default: []].append(hint)
                    }
                }
            }

            let server = try Socket(context, .push)
            try server.connect(broker.notices)
            let count = 10_000
            for head in 1...count {
                try server.send(Self.notice(head))
                if head % 200 == 0 { try drain() }
            }
            // Three registered devices; a notice reaches the two that are not its origin, or all three (watch).
            let expectedAccepted = (1...count).reduce(0) { $0 + (Self.origins[$1 % 4] == "watch" ? 3 : 2) }

            var stats = try launcher.stats()
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                try drain()
                stats = try launcher.stats()
                let total = received.values.reduce(0) { $0 + $1.count }
                if stats.hints.accepted == expectedAccepted && stats.hints.held == 0
                    && total == stats.hints.delivered + stats.hints.duplicated
                {
                    break
                }
                usleep(50_000)
            }

            let hints = stats.hints
            #expect(wrongShapes.isEmpty, "hint frames with other keys: \(wrongShapes.prefix(3))")
            #expect(hints.accepted == expectedAccepted)
            #expect(hints.balances, "\(hints)")
            #expect(hints.held == 0 && hints.coalesced == 0 && hints.throttled == 0 && hints.discarded == 0)
            let lossRatio = Double(hints.dropped) / Double(hints.accepted)
            let duplicateRatio = Double(hints.duplicated) / Double(hints.delivered)
            #expect(abs(lossRatio - 0.3) < 0.02, "loss \(lossRatio)")
            #expect(abs(duplicateRatio - 0.2) < 0.02, "duplicates \(duplicateRatio)")
            #expect(stats.data["dropReasons"]?["chaos-loss"]?.intValue == hints.dropped)
            for (id, _, _) in registered {
                let perDevice = stats.data["devices"]?[id]
                let got = received[id] ?? []
                let delivered = perDevice?["delivered"]?.intValue ?? -1
                let duplicated = perDevice?["duplicated"]?.intValue ?? -1
                #expect(got.count == delivered + duplicated, "\(id)")
                #expect(Set(got.map(\.hint)).count == delivered, "\(id): distinct hints")
                #expect(got.allSatisfy { $0.account == "acme" && Self.origins[$0.head % 4] != id }, "\(id): origin")
            }

            // Every decision is an event; SIGTERM stops the broker cleanly.
            #expect(broker.terminate() == 0)
            let events = broker.eventCounts()
            #expect(events["hint.accepted"] == hints.accepted)
            #expect(events["hint.delivered"] == hints.delivered)
            #expect(events["hint.dropped"] == hints.dropped)
            #expect(events["hint.duplicated"] == hints.duplicated)
            #expect(events["notice.received"] == count)
            let stopped = broker.events(of: "process.stopped").first
            #expect(stopped?["hints"].flatMap(HintCounters.init) == hints)
        }
    }

    @Test func badInputGetsAnErrorAndNothingElseAndTheBrokerKeepsServing() async throws {
        try await onOwnThread {
            let broker = try BrokerProcess(devices: [("pixel", .android, "t-p"), ("laptop", .web, "t-l")])
            defer { broker.stop() }
            let context = try Context()
            let launcher = try broker.controlClient(context)
            let stranger = try TestClient(context, endpoint: broker.listen, options: .brokerPeer())

            func expectError(_ code: ErrorCode, line: Int = #line, after send: () throws -> Void) throws {
                try send()
                let reply = try stranger.receiveOrFail(line: line)
                guard case .error(let error) = reply else {
                    Issue.record("expected error \(code), got \(reply)")
                    return
                }
                #expect(error.code == code, "\(error.message)")
                #expect(!error.message.isEmpty)
            }
            let register = { (device: String, account: String, token: String) in
                try stranger.send(.register(Register(device: device, account: account, platform: .android,
                                                     token: token)))
            }
            try expectError(.unknownDevice) { try register("ghost", "acme", "t-p") }
            try expectError(.badToken) { try register("pixel", "acme", "t-wrong") }
            try expectError(.wrongAccount) { try register("pixel", "zen", "t-p") }
            try expectError(.malformed) { try stranger.sendRaw([Array("SL1 register".utf8), Array("{".utf8)]) }
            try expectError(.badFrame) { try stranger.sendRaw([Array("garbage".utf8)]) }
            try expectError(.notAuthenticated) {
                try stranger.send(.deviceState(DeviceState(device: "pixel", online: false, app: .forceQuit)))
            }
            try expectError(.tooLarge) {
                try stranger.sendRaw([Array("SL1 register".utf8), [UInt8](repeating: 0x20, count: 1_500_000)])
            }
            #expect(try stranger.receiveFrames(timeoutMs: 300) == nil, "a second reply to bad input")

            // The control socket answers bad frames with an error too; the notices socket can only log them.
            let rawControl = try TestClient(context, endpoint: broker.control, options: .brokerPeer())
            try rawControl.sendRaw([Array("SL1 control".utf8), Array(#"{"req": "one"}"#.utf8)])
            guard case .error(let controlError) = try rawControl.receiveOrFail() else {
                throw TestFailure("no error for a malformed control message")
            }
            #expect(controlError.code == .malformed)
            #expect(try launcher.call("dance", timeoutMs: 10_000).ok == false)
            let server = try Socket(context, .push)
            try server.connect(broker.notices)
            try server.send([Array("SL1 notice".utf8), Array(#"{"account": "acme"}"#.utf8)])

            // Nothing changed, and the broker still serves.
            let pixel = try TestClient(context, endpoint: broker.listen, options: .brokerPeer())
            let welcome = try pixel.register("pixel", platform: .android, token: "t-p")
            #expect(welcome == .registered(Registered(device: "pixel")))
            try server.send(Self.notice(1, origin: "laptop"))
            guard case .hint(let hint) = try pixel.receiveOrFail() else { throw TestFailure("no hint after bad input") }
            #expect(hint == Hint(hint: "h-1", account: "acme", head: 1))
            let stats = try launcher.stats()
            #expect(stats.hints.accepted == 1 && stats.hints.delivered == 1)
            #expect(stats.data["devices"]?.objectValue?.map(\.0) == ["pixel"])
            #expect(broker.eventCounts()["request.refused"] == 9)

            let stop = try launcher.call("stop", timeoutMs: 10_000)
            #expect(stop.ok)
            #expect(broker.waitForExit(timeout: 10) == 0)
            #expect(broker.events(of: "process.stopped").count == 1)
        }
    }

    @Test func restartedDeviceReRegistersAndGetsWhatWasHeldWhileOffline() async throws {
        try await onOwnThread {
            let broker = try BrokerProcess(devices: [("pixel", .android, "t-p")])
            defer { broker.stop() }
            let context = try Context()
            let launcher = try broker.controlClient(context)
            let server = try Socket(context, .push)
            try server.connect(broker.notices)

            var first: TestClient? = try TestClient(context, endpoint: broker.listen, options: .brokerPeer())
            _ = try first?.register("pixel", platform: .android, token: "t-p")
            first?.socket.close()
            first = nil
            // The old connection is gone: the ROUTER cannot route to it (router-mandatory), a drop with its reason.
            var head = 0
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                head += 1
                try server.send(Self.notice(head, origin: "laptop"))
                if try launcher.stats().data["dropReasons"]?["unreachable"] != nil { break }
                usleep(20_000)
            }
            #expect(try launcher.stats().data["dropReasons"]?["unreachable"]?.intValue ?? 0 > 0)

            let second = try TestClient(context, endpoint: broker.listen, options: .brokerPeer())
            let welcome = try second.register("pixel", platform: .android, token: "t-p")
            #expect(welcome == .registered(Registered(device: "pixel")))
            try second.send(.deviceState(DeviceState(device: "pixel", online: false, app: .background)))
            // The state message and the notices travel on different sockets: wait until the broker has the state.
            let stateDeadline = Date().addingTimeInterval(10)
            while broker.events(of: "device.state").isEmpty && Date() < stateDeadline { usleep(10_000) }
            let before = try launcher.stats().hints
            try server.send(Self.notice(head + 1, origin: "laptop"))
            try server.send(Self.notice(head + 2, origin: "laptop"))
            let heldDeadline = Date().addingTimeInterval(10)
            while try launcher.stats().hints.held < 2 && Date() < heldDeadline { usleep(10_000) }
            #expect(try second.receiveFrames(timeoutMs: 200) == nil)

            try second.send(.deviceState(DeviceState(device: "pixel", online: true, app: .background)))
            var heads: [Int] = []
            for _ in 0..<2 {
                if case .hint(let hint) = try second.receiveOrFail() { heads.append(hint.head) }
            }
            #expect(heads == [head + 1, head + 2])
            let after = try launcher.stats().hints
            #expect(after.delivered == before.delivered + 2 && after.held == 0 && after.balances)
            #expect(broker.terminate() == 0)
        }
    }

    @Test func aDeviceThatDoesNotReadFillsItsPipeAndHintsAreDroppedWithReasonHWM() async throws {
        try await onOwnThread {
            // A Unix socket buffers far less than loopback TCP, so the pipe fills after a few thousand hints.
            let sockets = TempFolder()
            #expect(ThreadExecutor.isOnExecutorThread,
                "the body runs on its own thread (name \(Thread.current.name ?? "none"))")
            let broker = try BrokerProcess(devices: [("pixel", .android, "t-p")], listen: sockets.ipc("hwm.sock"),
                                           extra: ["--hint-hwm", "1"])
            defer { broker.stop() }
            let context = try Context()
            let launcher = try broker.controlClient(context)
            let pixel = try TestClient(context, endpoint: broker.listen, options: .brokerPeer(receiveHWM: 1))
            _ = try pixel.register("pixel", platform: .android, token: "t-p")
            let server = try Socket(context, .push)
            try server.connect(broker.notices)
            var hwmDrops = 0
            var head = 0
            let deadline = Date().addingTimeInterval(30)
            while hwmDrops == 0 && Date() < deadline {
                for _ in 0..<1000 {
                    head += 1
                    try server.send(Self.notice(head, origin: "laptop"))
                }
                hwmDrops = try launcher.stats().data["dropReasons"]?["hwm"]?.intValue ?? 0
            }
            #expect(hwmDrops > 0)
            let stats = try launcher.stats()
            #expect(stats.hints.balances)
            #expect(stats.hints.dropped == stats.data["dropReasons"]?["hwm"]?.intValue)
            #expect(broker.terminate() == 0)
        }
    }

    @Test func subModeReceivesNoticesFromAPublisher() async throws {
        try await onOwnThread {
            let broker = try BrokerProcess(devices: [("pixel", .android, "t-p")],
                                           extra: ["--notices-mode", "sub", "--notices-hwm", "10"])
            defer { broker.stop() }
            let context = try Context()
            let pixel = try TestClient(context, endpoint: broker.listen, options: .brokerPeer())
            _ = try pixel.register("pixel", platform: .android, token: "t-p")
            let server = try Socket(context, .pub)
            try server.connect(broker.notices)
            // PUB/SUB loses what is published before the subscription reaches the publisher: publish until a hint
            // arrives, and count what the broker saw against what was sent.
            var sent = 0
            var hint: Hint?
            let deadline = Date().addingTimeInterval(10)
            while hint == nil && Date() < deadline {
                sent += 1
                try server.send(Self.notice(sent, origin: "laptop"))
                if let frames = try pixel.receiveFrames(timeoutMs: 50), case .hint(let got) = try Codec.decode(frames) {
                    hint = got
                }
            }
            #expect(hint != nil)
            #expect(broker.terminate() == 0)
            let seen = broker.eventCounts()["notice.received"] ?? 0
            #expect(seen >= 1 && seen <= sent)
        }
    }

    @Test func helpExitsZeroAndBadFlagsExitTwo() throws {
        let executable = try Binaries.path("synclab-broker")
        let folder = TempFolder()
        var runs = 0
        func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
            runs += 1
            let child = try ChildProcess(executable, arguments, stdout: folder.file("out-\(runs).txt"),
                                         stderr: folder.file("err-\(runs).txt"))
            return (child.finish(within: 60).status, child.log, child.errors)
        }
        let help = try run(["--help"])
        #expect(help.status == 0)
        for flag in BrokerCommand.spec.flags { #expect(help.out.contains("--\(flag.name)")) }
        let unknown = try run(["--listen", "tcp://127.0.0.1:*", "--frobnicate"])
        #expect(unknown.status == 2 && unknown.err.contains("--frobnicate"))
        let missing = try run(["--listen", "tcp://127.0.0.1:*", "--notices", "tcp://127.0.0.1:*",
                               "--accounts", folder.file("none.json")])
        #expect(missing.status == 2 && missing.err.contains("none.json"))
        // An endpoint that will not bind is a start-up failure too: exit 2, naming it.
        let accounts = folder.file("accounts.json")
        try #"{"accounts": [{"id": "a", "devices": [{"id": "d", "platform": "web", "token": "t"}]}]}"#
            .write(toFile: accounts, atomically: true, encoding: .utf8)
        let unbindable = folder.ipc("no-such-folder/broker.sock")
        let bind = try run(["--listen", unbindable, "--notices", "tcp://127.0.0.1:*", "--accounts", accounts])
        #expect(bind.status == 2 && bind.err.contains(unbindable))
    }
}
