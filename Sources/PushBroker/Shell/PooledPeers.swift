import SyncProtocol

/// The devices speaking over pools' multiplexed connections (docs/PROTOCOL.md, "Pooled links"). A pool's connection
/// carries `[device, header, body]`; the instance never sees the envelope: each pooled device on a connection is
/// handed to it as a peer of its own, a *virtual routing id* (the connection's routing id, a zero byte, the device
/// id), so registration, `deviceState`, profiles, chaos and the per-device counters stay exactly per device, and the
/// simulation (which has no pools) is untouched. Sends to a virtual peer go to the connection with the device's frame
/// in front.
///
/// Bounded: an entry is made only for a device the pool's key may speak for (the accounts file's `pools`), and the
/// entries of a connection go when it ends.
struct PooledPeers {
    /// Pool id → the devices its key may speak for.
    let members: [String: Set<String>]
    /// Virtual routing id → the connection's routing id, the device frame, the connection's descriptor.
    private(set) var routes: [[UInt8]: (peer: [UInt8], device: [UInt8], connection: Int32)] = [:]

    init(members: [String: Set<String>]) { self.members = members }

    /// What a message on a pool's connection comes to.
    enum Outcome: Equatable {
        /// From `device`, for the instance as from `virtualPeer`.
        case device(String, virtualPeer: [UInt8], frames: [[UInt8]])
        /// Refused: the reply's envelope (the device frame as sent, cut to the id limit) and why.
        case refused(envelope: [UInt8], message: String)
    }

    /// Whether `user` (a ZAP user id) is a pool's: its messages carry the envelope.
    func isPool(_ user: String?) -> Bool { user.map { members[$0] != nil } ?? false }

    /// Reads a pool's message (`frames` without the routing id).
    mutating func admit(_ frames: [[UInt8]], peer: [UInt8], pool: String, connection: Int32) -> Outcome {
        guard let envelope = frames.first, frames.count >= 2 else {
            return .refused(envelope: [], message: "a pooled message is [device, header, body]: no device frame")
        }
        let cut = Array(envelope.prefix(Limits.maxIDBytes))
        guard let device = String(validating: envelope, as: UTF8.self), members[pool]?.contains(device) == true else {
            return .refused(envelope: cut, message: "pool \"\(pool)\"'s key does not speak for device "
                + "\"\(String(decoding: cut, as: UTF8.self))\"; nothing was changed")
        }
        let virtual = peer + [0] + envelope
        if routes[virtual] == nil { routes[virtual] = (peer, envelope, connection) }
        return .device(device, virtualPeer: virtual, frames: Array(frames.dropFirst()))
    }

    /// The real routing id and the device frame of a virtual peer; nil for a peer of its own connection.
    func route(_ peer: [UInt8]) -> (peer: [UInt8], device: [UInt8])? {
        routes[peer].map { ($0.peer, $0.device) }
    }

    /// A connection ended: its devices' virtual peers go.
    mutating func ended(_ connection: Int32) {
        guard !routes.isEmpty else { return }
        routes = routes.filter { $0.value.connection != connection }
    }
}
