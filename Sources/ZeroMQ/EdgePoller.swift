import CZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// Waits on many sockets at once with one `epoll` over their `ZMQ_FD`s, for a loop that owns hundreds of sockets
/// (a device pool: two DEALERs a device). `zmq_poll` over N sockets asks each of them for its events on every call —
/// a mailbox check, a `poll(2)` and a `getpid(2)` per socket — so an idle pool of 250 devices made 12,000 system
/// calls a second; here a wait costs one `epoll_wait` and one `ZMQ_EVENTS` per socket that may have changed.
///
/// libzmq's `ZMQ_FD` is edge-triggered: it becomes readable when the socket's state may have changed, not while a
/// message waits, and any send or receive on the socket can consume that signal (zmq_getsockopt(3), ZMQ_FD). So the
/// owner says which sockets it used (`touch`): each is asked for `ZMQ_EVENTS` before the next wait blocks, as are
/// the sockets whose descriptor signalled and every socket once when it is added. A socket the owner did not use and
/// whose descriptor did not signal has nothing new, which is what makes the wait cost what is ready, not what is open.
///
/// Belongs to the thread that owns the sockets; the epoll descriptor is closed with it.
public final class EdgePoller {
    public private(set) var sockets: [Socket] = []
    private let epoll: Int32
    /// Indexes of sockets to ask for `ZMQ_EVENTS` before blocking: added, touched, or signalled.
    private var unchecked: Set<Int> = []
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    public init() throws {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw ZMQError(code: errno, operation: "epoll_create1") }
    }

    deinit { close(epoll) }

    /// Adds a socket; returns its index (what `wait` answers and `touch` takes).
    @discardableResult
    public func add(_ socket: Socket) throws -> Int {
        let fd = try socket.intOption(ZMQ_FD)
        let index = sockets.count
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLET.rawValue
        event.data.u64 = UInt64(index)
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw ZMQError(code: errno, operation: "epoll_ctl(ADD)")
        }
        sockets.append(socket)
        unchecked.insert(index)
        return index
    }

    /// The owner sent or received on the socket at `index`: it is asked again before the next wait blocks.
    public func touch(_ index: Int) { unchecked.insert(index) }

    /// Every socket is asked again before the next wait blocks.
    public func touchAll() { unchecked.formUnion(sockets.indices) }

    /// The indexes of sockets with a message to read, waiting up to `timeoutMs` when none has (0: do not wait).
    /// Returns none only when the time ran out or a signal interrupted the wait: a descriptor that signalled a change
    /// that was not a message (a socket busy sending gets many: its pipes' commands) is asked and the wait goes on,
    /// as `zmq_poll` does, so the owner's loop does not turn for nothing.
    public func wait(timeoutMs: Int) throws -> [Int] {
        var ready = try readable(unchecked)
        unchecked = []
        guard ready.isEmpty else {
            // Signals that came meanwhile are read on the next call (epoll keeps them; the sockets are asked then).
            return ready
        }
        let deadline = timeoutMs < 0 ? nil : Self.monotonicMs() + timeoutMs
        var remaining = timeoutMs
        while true {
            let count = events.withUnsafeMutableBufferPointer {
                epoll_wait(epoll, $0.baseAddress, Int32($0.count), Int32(clamping: remaining))
            }
            if count < 0 {
                if errno == EINTR { return [] }
                throw ZMQError(code: errno, operation: "epoll_wait")
            }
            var signalled: Set<Int> = []
            for event in events.prefix(Int(count)) { signalled.insert(Int(event.data.u64)) }
            ready = try readable(signalled)
            guard ready.isEmpty, count > 0 else { return ready }
            if let deadline {
                remaining = deadline - Self.monotonicMs()
                if remaining <= 0 { return [] }
            }
        }
    }

    private static func monotonicMs() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000 + now.tv_nsec / 1_000_000
    }

    /// Of `indexes`, those whose socket has input (`ZMQ_EVENTS`, which also reads the socket's pending commands and
    /// so re-arms its descriptor), in index order.
    private func readable(_ indexes: Set<Int>) throws -> [Int] {
        var ready: [Int] = []
        for index in indexes.sorted() where try sockets[index].intOption(ZMQ_EVENTS) & ZMQ_POLLIN != 0 {
            ready.append(index)
        }
        return ready
    }
}
