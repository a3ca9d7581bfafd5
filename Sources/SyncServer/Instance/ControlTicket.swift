import SyncProtocol

/// A control command waiting for the shell (adding a device writes the database) before it is acknowledged.
public struct ControlTicket: Sendable, Equatable {
    public var peer: Peer
    public var req: Int
    public var command: String
    public var args: [String: JSONValue]

    public init(peer: Peer, req: Int, command: String, args: [String: JSONValue]) {
        self.peer = peer
        self.req = req
        self.command = command
        self.args = args
    }
}
