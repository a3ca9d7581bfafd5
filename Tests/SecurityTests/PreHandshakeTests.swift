import Foundation
import LabTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A peer that has not finished (or even begun) its handshake cannot make a socket buffer a large frame: every
/// socket of every role takes `ZMQ_MAXMSGSIZE` (4 MiB, PROTOCOL.md §1) at creation, and libzmq checks a frame's
/// declared size against it before buffering any of it. Without the limit the broker's notices socket took a
/// declared 256 MiB frame and held every byte sent after the header.
@Suite struct PreHandshakeTests {
    /// How much of the declared frame is sent after its header: enough that holding it would show, far past the limit.
    static let sentBytes = 48 << 20

    @Test(arguments: [true, false])
    func aDeclaredHugeFrameBeforeTheHandshakeIsNotBuffered(curve: Bool) async throws {
        try await onOwnThread {
            let lab = try SecureLab(curve: curve)
            let sockets: [(name: String, endpoint: String, process: String)] = [
                ("server devices", lab.serverListen, "server"), ("server control", lab.serverControl, "server"),
                ("broker devices", lab.brokerListen, "broker"), ("broker notices", lab.brokerNotices, "broker"),
                ("broker control", lab.brokerControl, "broker"),
            ]
            for socket in sockets {
                let pid = socket.process == "server" ? lab.server!.pid : lab.broker!.pid
                let before = SecureLab.rssKiB(pid)
                let sent = try Self.sendHugeFrame(to: socket.endpoint, mechanism: curve ? "CURVE" : "NULL")
                let grown = (SecureLab.rssKiB(pid) - before) / 1_024
                #expect(grown < 20, "\(socket.name): resident memory grew \(grown) MB after \(sent >> 20) MiB sent")
            }
            #expect(lab.serverAlive && lab.brokerAlive)
            // Both still serve.
            let pixel = try lab.helloed("pixel")
            guard case .page? = try pixel.pull() else {
                Issue.record("the server does not serve after the attack")
                return
            }
            _ = try lab.registered("pixel")
        }
    }

    /// Opens a raw stream connection to an `ipc://` endpoint, sends a ZMTP 3.0 greeting and the header of a long
    /// command frame declaring 256 MiB, then up to `sentBytes` of it; returns how many bytes were taken before the
    /// peer closed the connection (or all of them).
    static func sendHugeFrame(to endpoint: String, mechanism: String) throws -> Int {
        let path = String(endpoint.dropFirst("ipc://".count))
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure.setup("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw TestFailure.setup("connect \(path): \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var greeting = [UInt8](repeating: 0, count: 64)
        greeting[0] = 0xFF
        greeting[9] = 0x7F
        greeting[10] = 3
        for (index, byte) in mechanism.utf8.enumerated() { greeting[12 + index] = byte }
        // A long command frame (flags 0x06) of 256 MiB: the size, 8 bytes big-endian.
        let declared: UInt64 = 256 << 20
        let header: [UInt8] = [0x06] + (0..<8).map { UInt8(declared >> (56 - 8 * UInt64($0)) & 0xFF) }
        guard sendAll(fd, greeting + header) else { return 0 }
        let chunk = [UInt8](repeating: 0x41, count: 1 << 16)
        var sent = 0
        while sent < sentBytes, sendAll(fd, chunk) { sent += chunk.count }
        // What was sent is read (or refused) by the time the peer has answered or closed: wait for either.
        var byte: UInt8 = 0
        var readTimeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &readTimeout, socklen_t(MemoryLayout<timeval>.size))
        while recv(fd, &byte, 1, 0) > 0 {}
        return sent
    }

    /// Writes every byte (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE); false when the peer stopped taking.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}
