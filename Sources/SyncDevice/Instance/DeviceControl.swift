import SyncProtocol

/// A control command for a device, parsed and checked once: what it asks, with its arguments typed.
/// `DeviceInstance.onControl` decides each with an exhaustive switch.
public enum DeviceControl: Sendable {
    case ping
    /// The user edits a draft: committed to the ledger first (`saveEdit`), then answered.
    case edit(LocalEdit)
    case lifecycle(LifecycleCommand)
    /// A manual pass, answered when it ends; `force` also claims ops whose backoff has not run out.
    case sync(force: Bool)
    case status
    /// The app is deleted and installed again: a new, empty ledger.
    case reinstall
    case stop
    /// Arms (or, with `off`, disarms) a crash point: the arguments are `CrashPoints.control`'s.
    case crashAt([String: JSONValue])

    /// Every command a device knows, for the answer to an unknown one.
    public static let commands = ["ping", "edit", "open", "background", "forceQuit", "close", "offline", "online",
                                  "plug", "unplug", "engagement", "refresh", "sync", "status", "reinstall", "stop",
                                  "crashAt"]

    /// The command `request` names, with its arguments checked; a bad argument or an unknown command throws
    /// `DeviceError.badArguments` naming it.
    public static func parse(_ request: Control) throws -> DeviceControl {
        let args = request.args
        switch request.command {
        case "ping": return .ping
        case "edit": return .edit(try LocalEdit.parse(args))
        case "open": return .lifecycle(.open)
        case "background": return .lifecycle(.background)
        case "forceQuit": return .lifecycle(.forceQuit)
        case "close": return .lifecycle(.close)
        case "offline": return .lifecycle(.offline)
        case "online": return .lifecycle(.online)
        case "plug": return .lifecycle(.plug)
        case "unplug": return .lifecycle(.unplug)
        case "engagement":
            guard let opens = args["opensPerDay"]?.doubleValue, opens >= 0, opens.isFinite else {
                throw DeviceError.badArguments(command: "engagement", reason: "\"opensPerDay\" must be a number ≥ 0")
            }
            return .lifecycle(.engagement(opensPerDay: opens))
        case "refresh":
            guard let on = args["on"]?.boolValue else {
                throw DeviceError.badArguments(command: "refresh", reason: "\"on\" must be true or false")
            }
            return .lifecycle(.refresh(on: on))
        case "sync":
            let force = args["force"]
            guard force == nil || force?.boolValue != nil else {
                throw DeviceError.badArguments(command: "sync", reason: "\"force\" must be true or false")
            }
            return .sync(force: force?.boolValue ?? false)
        case "status": return .status
        case "reinstall": return .reinstall
        case "stop": return .stop
        case "crashAt": return .crashAt(args)
        default:
            throw DeviceError.badArguments(command: request.command, reason: "unknown command; a device knows "
                + commands.joined(separator: ", "))
        }
    }
}

/// A control request the instance answers once the driver has done its part (saved the edit, read the ledger's
/// counts, reinstalled, armed a crash point, or run the pass a `sync` waits for): who asked, and what.
public struct PendingControl: Sendable, Equatable {
    public var peer: [UInt8]
    public var request: Control

    public init(peer: [UInt8], request: Control) {
        self.peer = peer
        self.request = request
    }
}

/// How a control command is answered: acknowledged now, answered later (a `sync`, when its pass ends), or refused
/// with why.
public enum ControlAnswer: Sendable, Equatable {
    case ack(String, JSONValue?)
    case later
    case refused(String)

    /// The fields of the `control.received` event.
    public func eventFields(_ request: Control) -> [(String, JSONValue)] {
        let args = JSONValue.object(request.args.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) })
        let (ok, detail): (Bool, String)
        switch self {
        case .ack(let text, _): (ok, detail) = (true, text)
        case .later: (ok, detail) = (true, "answered when the pass ends")
        case .refused(let text): (ok, detail) = (false, text)
        }
        return [("command", .string(request.command)), ("args", args), ("ok", .bool(ok)), ("detail", .string(detail))]
    }

    /// The acknowledgement to send now; nil when the command is answered later.
    public func ack(_ request: Control) -> ControlAck? {
        switch self {
        case .ack(let detail, let data): return ControlAck(req: request.req, ok: true, detail: detail, data: data)
        case .later: return nil
        case .refused(let detail): return ControlAck(req: request.req, ok: false, detail: detail)
        }
    }
}
