import Foundation
import LabTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 between one client and a server, recording every byte each way: what a network observer
/// sees. Runs on a thread of its own (blocking poll), never on the cooperative pool.
final class TCPRelay: @unchecked Sendable {  // the recordings are guarded by `lock`
    let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var up: [UInt8] = []
    private var down: [UInt8] = []
    private var stopped = false
    private var thread: Thread?

    init(to targetPort: Int) throws {
        target = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = Self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw TestFailure.setup("relay: cannot listen") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        startPumping()
    }

    private func startPumping() {
        let thread = Thread { [self] in pump() }
        self.thread = thread
        thread.start()
    }

    /// Bytes client → server and server → client so far.
    var recorded: (up: [UInt8], down: [UInt8]) { lock.withLock { (up, down) } }

    func stop() {
        lock.withLock { stopped = true }
    }

    deinit { close(listener) }

    static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// Connects to 127.0.0.1:`port`; -1 on failure.
    static func dial(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = address(port: port)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    private func pump() {
        var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        while !lock.withLock({ stopped }) {
            guard poll(&fds, 1, 50) > 0 else { continue }
            break
        }
        guard !lock.withLock({ stopped }) else { return }
        let client = accept(listener, nil, nil)
        let server = Self.dial(target)
        defer {
            close(client)
            close(server)
        }
        guard client >= 0, server >= 0 else { return }
        var pair = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !lock.withLock({ stopped }) {
            guard poll(&pair, 2, 50) > 0 else { continue }
            for (index, from, to) in [(0, client, server), (1, server, client)] where pair[index].revents != 0 {
                let n = read(from, &buffer, buffer.count)
                if n <= 0 { return }
                _ = write(to, buffer, n)
                lock.withLock {
                    if index == 0 { up += buffer[0..<n] } else { down += buffer[0..<n] }
                }
            }
        }
    }
}
