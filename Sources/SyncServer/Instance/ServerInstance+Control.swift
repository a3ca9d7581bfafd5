import LabKit
import SyncProtocol

extension ServerInstance {
    /// The control commands the server knows (`ServerControl`).
    public static let controlCommands = ["ping", "faults", "stats", "stop", "addDevice", "crashAt"]

    /// A message arrived on the control socket.
    public mutating func onControlMessage(from peer: Peer, frames: [[UInt8]]) -> [ServerDirective] {
        let control: Control
        switch Codec.decodeOrReply(frames) {
        case .success(.control(let decoded)):
            control = decoded
        case .success(let other):
            let error = ProtocolError.unexpected(type: other.type, receiver: "synclab-server's control socket")
            return refuseControl(peer, code: error.code, message: error.description, frames: frames)
        case .failure(let error):
            return refuseControl(peer, code: error.code, message: error.description, frames: frames)
        }
        let ticket = ControlTicket(peer: peer, req: control.req, command: control.command, args: control.args)
        guard let command = ServerControl.parse(control) else {
            let known = Self.controlCommands.joined(separator: ", ")
            return acknowledge(ticket, ok: false,
                               detail: "unknown command \"\(control.command)\": the server knows \(known)")
        }
        switch command {
        case .ping:
            return acknowledge(ticket, ok: true, detail: "pong")
        case .stats:
            stats.sessions = sessions.count
            return acknowledge(ticket, ok: true, detail: "", data: stats.json)
        case .stop:
            return acknowledge(ticket, ok: true, detail: "stopping") + [.stop]
        case .faults(let args):
            do {
                faults = try faults.updated(with: args)
            } catch {
                return acknowledge(ticket, ok: false, detail: error.description)
            }
            return [.log(EventLine(.faultSet, faults.fields))]
                + acknowledge(ticket, ok: true, detail: "faults set", data: .object(faults.fields))
        case .addDevice(let args):
            do {
                return [.addDevice(try Self.device(from: args), ticket)]
            } catch {
                return acknowledge(ticket, ok: false, detail: error.description)
            }
        case .crashAt(let args):
            return [.armCrash(args, ticket)]
        }
    }

    /// The driver armed (or disarmed) the crash point `crashAt` named (`ok`), or could not: `detail` says what it
    /// did, or what was wrong.
    public func onCrashArmed(ok: Bool, detail: String, ticket: ControlTicket) -> [ServerDirective] {
        guard ok else { return acknowledge(ticket, ok: false, detail: detail) }
        return [.log(EventLine(.crashArmed, [("detail", .string(detail))]))]
            + acknowledge(ticket, ok: true, detail: detail)
    }

    /// The shell added the device to the database: hellos from it are accepted from now on.
    public mutating func onDeviceAdded(_ record: DeviceRecord, ticket: ControlTicket) -> [ServerDirective] {
        var stored = record
        stored.token = TokenHash.stored(record.token)
        directory[record.id] = stored
        if stats.heads[record.account] == nil { stats.heads[record.account] = 0 }
        // A new token ends the sessions opened with the old one.
        for (id, session) in sessions where session.device == record.id { sessions[id] = nil }
        return acknowledge(ticket, ok: true, detail: "device \"\(record.id)\" of account \"\(record.account)\"")
    }

    /// The shell could not add the device (it belongs to another account, or the database failed).
    public mutating func onDeviceAddFailed(_ error: ServerError, ticket: ControlTicket) -> [ServerDirective] {
        acknowledge(ticket, ok: false, detail: error.description)
    }

    static func device(from args: [String: JSONValue]) throws(ServerError) -> DeviceRecord {
        func text(_ name: String) throws(ServerError) -> String {
            guard let value = args[name]?.stringValue, !value.isEmpty, value.utf8.count <= Limits.maxIDBytes else {
                throw .invalidArgument(command: "addDevice", name: name,
                                       problem: "must be a non-empty string of at most \(Limits.maxIDBytes) bytes")
            }
            return value
        }
        let allowed = ["account", "device", "platform", "token", "publicKey"]
        for name in args.keys.sorted() where !allowed.contains(name) {
            throw .invalidArgument(command: "addDevice", name: name,
                                   problem: "is unknown: use \(allowed.joined(separator: ", "))")
        }
        let platformName = try text("platform")
        guard let platform = Platform(rawValue: platformName) else {
            let names = Platform.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidArgument(command: "addDevice", name: "platform", problem: "must be one of \(names)")
        }
        var publicKey: String?
        if args["publicKey"] != nil {
            guard let key = args["publicKey"]?.stringValue, key.utf8.count == 40 else {
                throw .invalidArgument(command: "addDevice", name: "publicKey",
                                       problem: "must be a CURVE public key: 40 characters of Z85")
            }
            publicKey = key
        }
        return DeviceRecord(id: try text("device"), account: try text("account"), platform: platform,
                            token: try text("token"), publicKey: publicKey)
    }

    func acknowledge(_ ticket: ControlTicket, ok: Bool, detail: String, data: JSONValue? = nil) -> [ServerDirective] {
        // Tokens never reach the event log.
        let args = ticket.args.keys.sorted().map { ($0, $0 == "token" ? JSONValue.string("…") : ticket.args[$0]!) }
        return [
            .log(EventLine(.controlReceived, [
                ("command", .string(ticket.command)), ("args", .object(args)), ("ok", .bool(ok)),
                ("detail", .string(detail)),
            ])),
            .controlReply(to: ticket.peer, message: .controlAck(ControlAck(req: ticket.req, ok: ok, detail: detail,
                                                                           data: data))),
        ]
    }

    mutating func refuseControl(_ peer: Peer, code: ErrorCode, message: String, frames: [[UInt8]])
        -> [ServerDirective]
    {
        stats.refused += 1
        let req = Self.requestNumber(in: frames)
        return [
            .log(EventLine(.requestRefused, [
                ("code", .string(code.rawValue)), ("message", .string(message)), ("peer", .string(peer.label)),
            ])),
            .controlReply(to: peer, message: .error(ErrorReply(req: req, code: code, message: message))),
        ]
    }
}
