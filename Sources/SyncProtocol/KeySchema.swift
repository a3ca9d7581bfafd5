/// Which keys a JSON body may carry, level by level. Only keys are checked here; the types of the values are
/// JSONDecoder's business.
indirect enum KeySchema: Sendable {
    /// Any JSON at all (free-form control args and ack data), or a scalar.
    case any
    /// An object that may carry exactly these keys (each at most once), with what each value may hold.
    case object([(key: [UInt8], value: KeySchema)])
    /// An array whose elements each follow the schema.
    case array(of: KeySchema)

    /// An object whose keys are `fields`, with free values except where `nested` says otherwise.
    static func object(_ fields: Set<String>, nested: [String: KeySchema] = [:]) -> KeySchema {
        .object(fields.sorted().map { (Array($0.utf8), nested[$0] ?? .any) })
    }

    /// The schema of each message type's body.
    static func body(of type: String) -> KeySchema {
        switch type {
        case "hello": return .object(Hello.fields)
        case "welcome": return .object(Welcome.fields)
        case "push": return .object(Push.fields, nested: ["ops": .array(of: .object(Op.fields))])
        case "pushResult": return .object(PushResult.fields, nested: ["results": .array(of: .object(OpResult.fields))])
        case "pull": return .object(Pull.fields)
        case "page": return .object(Page.fields, nested: ["changes": .array(of: .object(Change.fields))])
        case "notice": return .object(Notice.fields, nested: ["changes": .array(of: .object(ChangeRef.fields))])
        case "register": return .object(Register.fields)
        case "registered": return .object(Registered.fields)
        case "deviceState": return .object(DeviceState.fields)
        case "hint": return .object(Hint.fields)
        case "control": return .object(Control.fields)
        case "controlAck": return .object(ControlAck.fields)
        case "error": return .object(ErrorReply.fields)
        default: return .any
        }
    }

    /// Built once: every body is checked against one of these.
    static let bodies: [String: KeySchema] = Dictionary(
        uniqueKeysWithValues: Message.allTypes.map { ($0, body(of: $0)) })
}
