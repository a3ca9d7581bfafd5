/// Every message the lab's processes exchange. On the wire: two frames, `SL1 <type>` then a JSON body
/// (behind the routing-id frame a ROUTER adds or strips). See docs/PROTOCOL.md.
public enum Message: Sendable, Equatable {
    case hello(Hello)
    case welcome(Welcome)
    case push(Push)
    case pushResult(PushResult)
    case pull(Pull)
    case page(Page)
    case notice(Notice)
    case register(Register)
    case registered(Registered)
    case deviceState(DeviceState)
    case hint(Hint)
    case control(Control)
    case controlAck(ControlAck)
    case error(ErrorReply)

    /// The type name in the header frame.
    public var type: String {
        switch self {
        case .hello: return "hello"
        case .welcome: return "welcome"
        case .push: return "push"
        case .pushResult: return "pushResult"
        case .pull: return "pull"
        case .page: return "page"
        case .notice: return "notice"
        case .register: return "register"
        case .registered: return "registered"
        case .deviceState: return "deviceState"
        case .hint: return "hint"
        case .control: return "control"
        case .controlAck: return "controlAck"
        case .error: return "error"
        }
    }

    public static let allTypes = [
        "hello", "welcome", "push", "pushResult", "pull", "page", "notice", "register", "registered", "deviceState",
        "hint", "control", "controlAck", "error",
    ]
}

extension Message {
    /// Runs the body's own checks (non-empty ids, bounds), as decoding any message does.
    func validate() throws(ProtocolError) {
        switch self {
        case .hello(let m): try m.validate()
        case .welcome(let m): try m.validate()
        case .push(let m): try m.validate()
        case .pushResult(let m): try m.validate()
        case .pull(let m): try m.validate()
        case .page(let m): try m.validate()
        case .notice(let m): try m.validate()
        case .register(let m): try m.validate()
        case .registered(let m): try m.validate()
        case .deviceState(let m): try m.validate()
        case .hint(let m): try m.validate()
        case .control(let m): try m.validate()
        case .controlAck(let m): try m.validate()
        case .error(let m): try m.validate()
        }
    }
}
