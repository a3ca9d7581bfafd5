import SyncProtocol

/// The devices speaking over pools' multiplexed connections (docs/PROTOCOL.md §13, "Pooled links"), for the broker's
/// and the server's shells alike. A pool's connection carries `[device, header, body]`; the instance never sees the
/// envelope: each pooled device on a connection is handed to it as a peer of its own, a *virtual routing id* (the
/// connection's routing id, a zero byte, the device id), so sessions, registration, profiles, chaos and the
/// per-device counters stay exactly per device, and the simulation (which has no pools) is untouched. Sends to a
/// virtual peer go to the connection with the device's frame in front.
///
/// Bounded: an entry is made only for a device the pool's key may speak for (the accounts file's `pools`), and the
/// entries of a connection go when it ends.
public struct PooledPeers: Sendable {
    /// Pool id → the devices its key may speak for.
    public let members: [String: Set<String>]
    /// Virtual routing id → the connection's routing id, the device frame, the connection's descriptor.
    public private(set) var routes: [[UInt8]: Route] = [:]

    /// Where a virtual peer's messages go.
    public struct Route: Sendable, Equatable {
        public var peer: [UInt8]
        public var device: [UInt8]
        public var connection: Int32
    }

    public init(members: [String: Set<String>]) { self.members = members }

    /// What a message on a pool's connection comes to.
    public enum Outcome: Equatable, Sendable {
        /// From `device`, for the instance as from `virtualPeer`.
        case device(String, virtualPeer: [UInt8], frames: [[UInt8]])
        /// Refused: the reply's envelope (the device frame as sent, cut to the id limit) and why.
        case refused(envelope: [UInt8], message: String)
    }

    /// Whether `user` (a ZAP user id) is a pool's: its messages carry the envelope.
    public func isPool(_ user: String?) -> Bool { user.map { members[$0] != nil } ?? false }

    /// The most devices any one pool's key speaks for (0 without pools): what one connection may have in flight.
    public var largestPool: Int { members.values.map(\.count).max() ?? 0 }

    /// Reads a pool's message (`frames` without the routing id).
    public mutating func admit(_ frames: [[UInt8]], peer: [UInt8], pool: String, connection: Int32) -> Outcome {
        guard let envelope = frames.first, frames.count >= 2 else {
            return .refused(envelope: [], message: "a pooled message is [device, header, body]: no device frame")
        }
        let cut = Array(envelope.prefix(Limits.maxIDBytes))
        guard let device = String(validating: envelope, as: UTF8.self), members[pool]?.contains(device) == true else {
            return .refused(envelope: cut, message: "pool \"\(pool)\"'s key does not speak for device "
                + "\"\(String(decoding: cut, as: UTF8.self))\"; nothing was changed")
        }
        let virtual = peer + [0] + envelope
        if routes[virtual] == nil { routes[virtual] = Route(peer: peer, device: envelope, connection: connection) }
        return .device(device, virtualPeer: virtual, frames: Array(frames.dropFirst()))
    }

    /// The real routing id and the device frame of a virtual peer; nil for a peer of its own connection.
    public func route(_ peer: [UInt8]) -> (peer: [UInt8], device: [UInt8])? {
        guard !routes.isEmpty else { return nil }
        return routes[peer].map { ($0.peer, $0.device) }
    }

    /// A connection ended: its devices' virtual peers go.
    public mutating func ended(_ connection: Int32) {
        guard !routes.isEmpty else { return }
        routes = routes.filter { $0.value.connection != connection }
    }
}
