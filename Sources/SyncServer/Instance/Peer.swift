/// Who sent a message to one of the server's ROUTER sockets: the routing id libzmq put in front of it, and whether
/// the client is REQ-style (an empty delimiter frame after the id, which the reply must carry back).
public struct Peer: Hashable, Sendable {
    public var routingID: [UInt8]
    public var delimited: Bool
    /// Who the connection authenticated as: the ZAP user id bound to its CURVE key (a device id); nil under NULL.
    public var user: String?
    /// The connection's file descriptor (-1 unknown): a session belongs to one connection and ends with it.
    public var connection: Int32

    public init(routingID: [UInt8], delimited: Bool = false, user: String? = nil, connection: Int32 = -1) {
        self.routingID = routingID
        self.delimited = delimited
        self.user = user
        self.connection = connection
    }

    /// Splits a message received on a ROUTER into its sender and its payload; nil when there is no payload.
    public static func split(_ frames: [[UInt8]], user: String? = nil, connection: Int32 = -1)
        -> (Peer, [[UInt8]])?
    {
        guard frames.count >= 2 else { return nil }
        if frames[1].isEmpty && frames.count >= 3 {
            return (Peer(routingID: frames[0], delimited: true, user: user, connection: connection),
                    Array(frames[2...]))
        }
        return (Peer(routingID: frames[0], user: user, connection: connection), Array(frames[1...]))
    }

    /// The frames to send on the ROUTER to reach this peer with `payload`.
    public func envelope(_ payload: [[UInt8]]) -> [[UInt8]] {
        delimited ? [routingID, []] + payload : [routingID] + payload
    }

    /// The routing id in hex, for events.
    public var label: String {
        let digits = Array("0123456789abcdef")
        var out = ""
        out.reserveCapacity(routingID.count * 2)
        for byte in routingID {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return out
    }
}
