import CZeroMQ
import Synchronization

/// A libzmq context. Sockets are made from it; `shutdown()` makes every blocking call on its sockets return ETERM.
///
/// `@unchecked Sendable`: libzmq documents contexts as thread safe; only the handle is shared.
public final class Context: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let terminated = Atomic<Bool>(false)

    public init(ioThreads: Int32 = 1) throws {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("ctx_new") }
        self.handle = handle
        if ioThreads != 1 {
            zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        }
    }

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
