import LabKit
import SyncProtocol
import Testing

@testable import PushBroker

/// `BrokerDriver`'s bundles of hints (docs/PROTOCOL.md §16) over an IO that records what it was asked to send: the
/// hints one notice makes for devices on pool connections leave as one bundle a connection, however the devices
/// of two pools interleave, each hint's `hint.delivered` follows the send that carried it, and a device whose hints
/// go alone (no pool) gets its own message.
@Suite struct HintBundleTests {
    /// A machine that takes every send: six pooled devices, p0…p5, alternately on connection A and B, and one
    /// device, solo, on a connection of its own.
    final class RecordingIO: BrokerIO {
        var bundles: [(connection: String, devices: [String])] = []
        var alone: [[UInt8]] = []
        var delivered: [String] = []
        /// What happened, in order: "send A", "send solo", "delivered p0", …
        var log: [String] = []

        static func peer(_ device: String) -> [UInt8] { Array("peer-\(device)".utf8) }

        func bundleRoute(_ peer: [UInt8]) -> (connection: [UInt8], device: [UInt8])? {
            let name = String(decoding: peer, as: UTF8.self).replacingOccurrences(of: "peer-", with: "")
            guard name.hasPrefix("p"), let number = Int(name.dropFirst()) else { return nil }
            return (Array((number % 2 == 0 ? "A" : "B").utf8), Array(name.utf8))
        }

        func sendHints(on connection: [UInt8], _ hints: [(device: [UInt8], body: [UInt8])]) -> [SendFailure?] {
            let name = String(decoding: connection, as: UTF8.self)
            bundles.append((name, hints.map { String(decoding: $0.device, as: UTF8.self) }))
            log.append("send \(name)")
            return hints.map { _ in nil }
        }

        func sendHint(to peer: [UInt8], body: [UInt8]) -> SendFailure? {
            alone.append(peer)
            log.append("send solo")
            return nil
        }

        func emitHintEvent(_ directive: BrokerDirective) {
            if case let .hintDelivered(target, _, _) = directive {
                delivered.append(target.id)
                log.append("delivered \(target.id)")
            }
        }

        var nanos: UInt64 { 0 }
        var nowSim: Double { 1 }
        func emit(_ type: String, _ fields: [(String, JSONValue)]) {}
        func flushEvents() {}
        func reply(on socket: BrokerSocket, to peer: [UInt8], _ frames: [[UInt8]]) {}
        func die(at point: CrashPoint, nth: Int, work: Int) {}
    }

    static let devices = (0..<6).map { "p\($0)" } + ["solo"]

    @Test("one notice: one bundle a pool connection however its devices interleave, outcomes after each send")
    func oneBundleAConnection() throws {
        let directory = try AccountDirectory(Self.devices.map {
            AccountDirectory.Entry(device: $0, account: "acme", platform: .android, token: "t-\($0)")
        })
        let io = RecordingIO()
        let driver = BrokerDriver(BrokerConfiguration(listen: "inproc://d", notices: "inproc://n",
                                                      accountsPath: "accounts.json"),
                                  directory: directory, io: io)
        for device in Self.devices {
            driver.onDeviceFrames(Codec.encode(.register(Register(device: device, account: "acme",
                                                                  platform: .android, token: "t-\(device)"))),
                                  peer: RecordingIO.peer(device), now: 0)
        }
        driver.onNoticeFrames(Codec.encode(.notice(Notice(account: "acme", head: 1, origin: "elsewhere",
            changes: [ChangeRef(seq: 1, draft: "d1", version: 1)]))), now: 1)
        #expect(io.bundles.map(\.connection) == ["A", "B"], "\(io.bundles)")
        #expect(io.bundles.first { $0.connection == "A" }?.devices == ["p0", "p2", "p4"])
        #expect(io.bundles.first { $0.connection == "B" }?.devices == ["p1", "p3", "p5"])
        #expect(io.alone == [RecordingIO.peer("solo")])
        #expect(Set(io.delivered) == Set(Self.devices) && io.delivered.count == Self.devices.count)
        // Each hint's outcome comes after the send that carried it, never before.
        for device in Self.devices {
            let carried = device == "solo" ? "send solo" : "send \(Int(device.dropFirst())! % 2 == 0 ? "A" : "B")"
            let sent = try #require(io.log.firstIndex(of: carried))
            let outcome = try #require(io.log.firstIndex(of: "delivered \(device)"))
            #expect(sent < outcome, "\(device): \(io.log)")
        }
        #expect(driver.hintBundles == 2 && driver.hintsBundled == 6)
        let stopped = driver.stopped(pid: 1).first { $0.0 == "hintBundles" }?.1
        #expect(stopped?["bundles"]?.intValue == 2 && stopped?["bundled"]?.intValue == 6)
    }
}
