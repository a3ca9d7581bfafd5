import CZeroMQ
import Synchronization

/// Tells when a connection of a socket ends: a `zmq_socket_monitor` PAIR that reports `ZMQ_EVENT_DISCONNECTED` with
/// the connection's file descriptor, the same number `Received.connection` carries on every message that came over
/// it. With it a ROUTER's owner ends the session of a connection that is gone (libzmq 4.3's `ZMQ_ROUTER_NOTIFY` is a
/// draft and not in Debian's build), so a later connection that presents the same routing id inherits nothing.
///
/// Belongs to the IO thread that polls `socket`.
public final class ConnectionMonitor {
    public let socket: Socket
    private static let counter = Atomic<Int>(0)

    public init(_ context: Context, watching watched: Socket) throws {
        let endpoint = "inproc://synclab.monitor.\(Self.counter.add(1, ordering: .relaxed).newValue)"
        guard zmq_socket_monitor(watched.handle, endpoint, ZMQ_EVENT_DISCONNECTED) == 0 else {
            throw ZMQError.last("socket_monitor")
        }
        socket = try Socket(context, .pair)
        try socket.connect(endpoint)
    }

    /// The file descriptors of the connections that ended since the last call.
    public func ended() throws -> [Int32] {
        var out: [Int32] = []
        while let frames = try socket.receive(dontWait: true) {
            guard let first = frames.first, first.count >= 6 else { continue }
            let event = UInt16(first[0]) | UInt16(first[1]) << 8
            guard Int32(event) == ZMQ_EVENT_DISCONNECTED else { continue }
            let value = UInt32(first[2]) | UInt32(first[3]) << 8 | UInt32(first[4]) << 16 | UInt32(first[5]) << 24
            out.append(Int32(bitPattern: value))
        }
        return out
    }

    public func close() { socket.close() }
}
