import CZeroMQ

/// Waits for input on several sockets with `zmq_poll` (the `zmq_poller_*` API is a draft in Debian's libzmq).
/// Belongs to the thread that owns its sockets.
public struct Poller {
    private var items: [zmq_pollitem_t] = []
    private var fdItems: [zmq_pollitem_t] = []
    public private(set) var sockets: [Socket] = []

    public init(_ sockets: [Socket] = []) {
        for socket in sockets { add(socket) }
    }

    public mutating func add(_ socket: Socket) {
        sockets.append(socket)
        items.append(zmq_pollitem_t(socket: socket.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0))
    }

    /// A plain file descriptor (a pipe from a child process): in `poll`'s answer its index comes after every
    /// socket's, in the order the descriptors were added (`sockets.count + n`).
    public mutating func add(fd: Int32) {
        fdItems.append(zmq_pollitem_t(socket: nil, fd: fd, events: Int16(ZMQ_POLLIN), revents: 0))
    }

    /// Waits up to `timeoutMs` (-1: forever) and returns the indices of the sockets with input; empty on timeout or
    /// when a signal interrupted the wait. Throws a terminated error when the context is shut down.
    public mutating func poll(timeoutMs: Int) throws -> [Int] {
        // The pipes ride at the end of the sockets' own array for the call (no array made per poll); a pipe's end of
        // file reads as an error (POLLHUP).
        let socketCount = items.count
        items.append(contentsOf: fdItems)
        defer { items.removeLast(items.count - socketCount) }
        let rc = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, Int32($0.count), timeoutMs) }
        if rc < 0 {
            let err = zmq_errno()
            if err == EINTR { return [] }
            throw ZMQError(code: err, operation: "poll")
        }
        if rc == 0 { return [] }
        var ready: [Int] = []
        for index in items.indices {
            let mask = index < socketCount ? Int16(ZMQ_POLLIN) : Int16(ZMQ_POLLIN | ZMQ_POLLERR)
            if items[index].revents & mask != 0 { ready.append(index) }
        }
        return ready
    }
}
