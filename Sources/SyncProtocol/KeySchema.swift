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
    static func fields(_ fields: Set<String>, nested: [String: KeySchema] = [:]) -> KeySchema {
        .object(fields.sorted().map { (Array($0.utf8), nested[$0] ?? .any) })
    }

    /// The schema of each message type's body.
    static func body(of type: String) -> KeySchema {
        switch type {
        case "hello": return .fields(Hello.fields)
        case "welcome": return .fields(Welcome.fields)
        case "push": return .fields(Push.fields, nested: ["ops": .array(of: .fields(Op.fields))])
        case "pushResult":
            return .fields(PushResult.fields, nested: ["results": .array(of: .fields(OpResult.fields)), "page": page])
        case "pull": return .fields(Pull.fields)
        case "page": return page
        case "notice": return .fields(Notice.fields, nested: ["changes": .array(of: .fields(ChangeRef.fields))])
        case "register": return .fields(Register.fields)
        case "registered": return .fields(Registered.fields)
        case "deviceState": return .fields(DeviceState.fields)
        case "hint": return .fields(Hint.fields)
        case "control": return .fields(Control.fields)
        case "controlAck": return .fields(ControlAck.fields)
        case "error": return .fields(ErrorReply.fields)
        default: return .any
        }
    }

    /// A page's object: a `page` message's body, or a `pushResult`'s `page`.
    static let page = KeySchema.fields(Page.fields, nested: ["changes": .array(of: .fields(Change.fields))])

    /// Built once: every body is checked against one of these.
    static let bodies: [String: KeySchema] = Dictionary(
        uniqueKeysWithValues: Message.allTypes.map { ($0, body(of: $0)) })
}
