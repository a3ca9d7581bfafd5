import CZeroMQ
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A libzmq context. Sockets are made from it; `shutdown()` makes every blocking call on its sockets return ETERM.
///
/// `@unchecked Sendable`: libzmq documents contexts as thread safe; only the handle is shared.
public final class Context: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let terminated = Atomic<Bool>(false)

    public init(ioThreads: Int32 = 1) throws {
        _ = Self.seeded
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("ctx_new") }
        self.handle = handle
        if ioThreads != 1 {
            zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        }
    }

    /// libzmq 4.3.4 draws a ROUTER's first automatic routing id (and REQ's request ids) from libc's `rand()`, which
    /// it never seeds: every process would start from seed 1, so the ids were the same in every run. Seeded once per
    /// process from the system's generator before the first socket exists (defence in depth: with the ZAP handler's
    /// own routing ids a ROUTER of the lab never generates one).
    private static let seeded: Bool = {
        var generator = SystemRandomNumberGenerator()
        srand(UInt32.random(in: 0...UInt32.max, using: &generator))
        return true
    }()

    /// Makes every socket of this context fail with ETERM, so threads blocked in poll or receive wake up and close.
    /// Does not wait; safe from any thread.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    /// Ends the context once every socket is closed, waiting at most each socket's linger for its queued messages
    /// to go out: a process that exits right after a last reply calls this so the reply is not lost with it.
    public func terminate() {
        guard !terminated.exchange(true, ordering: .acquiringAndReleasing) else { return }
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    deinit {
        // zmq_ctx_term waits for sockets to close; with every socket given a linger at creation it cannot hang on
        // unsent messages, and sockets hold a strong reference to their context, so none is open here.
        terminate()
    }

    /// libzmq's version as (major, minor, patch). `ZMQ_VERSION` does not import into Swift.
    public static var version: (major: Int32, minor: Int32, patch: Int32) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (major, minor, patch)
    }
}
