import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// What a network observer between a device and the server sees and can do: ciphertext, and a replay that changes
/// nothing.
@Suite struct WireTests {
    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let bytes = Array(needle.utf8)
        guard haystack.count >= bytes.count else { return false }
        return (0...(haystack.count - bytes.count)).contains { Array(haystack[$0..<$0 + bytes.count]) == bytes }
    }

    /// The control case: with `security: "none"` the same capture shows every header and body in clear, so the
    /// capture below would see plaintext if there were any.
    @Test func withoutCurveTheWireIsPlaintext() async throws {
        try await onOwnThread {
            let lab = try SecureLab(tcp: true, curve: false)
            let relay = try TCPRelay(to: Int(lab.serverListen.split(separator: ":").last!)!)
            defer { relay.stop() }
            let pixel = try lab.client("tcp://127.0.0.1:\(relay.port)", pair: nil, serverKey: nil)
            guard case .welcome? = try pixel.hello("pixel", "acme") else {
                Issue.record("no welcome through the relay")
                return
            }
            #expect(Self.contains(relay.recorded.up, "SL1 hello") && Self.contains(relay.recorded.up, "t-pixel"))
        }
    }

    @Test func theWireIsCiphertextAndAReplayChangesNothing() async throws {
        try await onOwnThread {
            let lab = try SecureLab(tcp: true)
            let serverPort = Int(lab.serverListen.split(separator: ":").last!)!
            let relay = try TCPRelay(to: serverPort)
            defer { relay.stop() }
            let pixel = try lab.client("tcp://127.0.0.1:\(relay.port)", pair: lab.keys["pixel"]!,
                                       serverKey: lab.keys["server"]!.publicKey)
            guard case .welcome? = try pixel.hello("pixel", "acme") else {
                Issue.record("no welcome through the relay")
                return
            }
            guard case .pushResult? = try pixel.push([SecureLab.op("pixel-1", title: "very secret title")]),
                  case .page? = try pixel.pull()
            else {
                Issue.record("no replies through the relay")
                return
            }
            let (up, down) = relay.recorded
            #expect(up.count > 200 && down.count > 200)
            #expect(Self.contains(up, "CURVE"), "the greeting names the mechanism")
            for secret in ["SL1", "very secret title", "t-pixel", "hello", "acme"] {
                #expect(!Self.contains(up, secret), "\(secret) in clear, device → server")
                #expect(!Self.contains(down, secret), "\(secret) in clear, server → device")
            }
            // Replaying the device's whole byte stream on a new connection: the server's cookie and short-term
            // keys differ, so the INITIATE and every message after it fail to authenticate.
            try lab.expectUnchanged {
                let hellos = lab.events(lab.serverEvents, type: "hello.accepted").count
                let pushes = lab.events(lab.serverEvents, type: "op.duplicate").count
                let fd = TCPRelay.dial(serverPort)
                defer { close(fd) }
                #expect(fd >= 0)
                _ = up.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                usleep(UInt32(silenceMs) * 1_000)
                #expect(lab.events(lab.serverEvents, type: "hello.accepted").count == hellos)
                #expect(lab.events(lab.serverEvents, type: "op.duplicate").count == pushes)
            }
        }
    }
}
