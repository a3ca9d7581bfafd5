/// The devices' side of one ROUTER on the simulated machine (the server's device socket, or the broker's), as
/// libzmq keeps it: the routing id of each device connection, whose connection an id names, and what the devices'
/// DEALERs sent while the process was down (delivered once it is back). `SimWorld` holds one per peer.
final class SimRouter {
    /// One device incarnation's connection to one incarnation of the peer: a new incarnation on either end is a new
    /// connection with a new routing id.
    struct Connection: Hashable {
        var device: String
        var deviceIncarnation: Int
        var peerIncarnation: Int
    }

    /// The process the ROUTER belongs to (`server`, `broker`).
    let peer: String
    private var routes: [Connection: [UInt8]] = [:]
    private(set) var owners: [[UInt8]: Connection] = [:]
    /// Sent while `peer` was down, in order.
    var queued: [(device: String, incarnation: Int, frames: [[UInt8]])] = []

    init(peer: String) {
        self.peer = peer
    }

    /// The routing id of `connection`; a new one from `counter` (the world's, shared by its ROUTERs) the first time.
    func routing(for connection: Connection, counter: inout UInt32) -> [UInt8] {
        if let routing = routes[connection] { return routing }
        counter += 1
        let n = counter
        let routing: [UInt8] = [0, UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                                UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        routes[connection] = routing
        owners[routing] = connection
        return routing
    }
}
