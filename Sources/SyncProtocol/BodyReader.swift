/// Reads the hot message bodies in one pass straight into their structs, without Foundation.
///
/// It is deliberately narrow: it accepts only bodies it is sure the strict path (`JSONChecker` + `JSONDecoder` +
/// `validate()`) accepts the same way (plain integers, strings with well-formed escapes, known keys each once,
/// every required key present), and gives up (`Unsure`) on anything else. `Codec` then runs the strict path, which
/// either decodes the body anyway or says exactly what is wrong with it, with the same `ProtocolError` as ever. So
/// an odd but valid body and every malformed one cost what they did before, and well-formed traffic is fast.
struct BodyReader {
    /// "Not sure": let the strict path decide.
    struct Unsure: Error {}

    private let text: UnsafeBufferPointer<UInt8>
    private var offset = 0

    private init(_ text: UnsafeBufferPointer<UInt8>) { self.text = text }

    /// The message of `type` in `body`, or nil when the strict path must decide.
    static func decode(type: String, body: [UInt8]) -> Message? {
        body.withUnsafeBufferPointer { buffer in
            var reader = BodyReader(buffer)
            do throws(Unsure) {
                let message = try reader.message(type)
                reader.skipWhitespace()
                guard reader.offset == buffer.count else { throw Unsure() }
                return message
            } catch {
                return nil
            }
        }
    }

    private mutating func message(_ type: String) throws(Unsure) -> Message {
        switch type {
        case "hello":
            let who = try credentials()
            return .hello(Hello(device: who.device, account: who.account, token: who.token, platform: who.platform))
        case "welcome":
            var device: String?, account: String?, head: Int?
            try object { r, key throws(Unsure) in
                switch key {
                case "device": device = try once(device, r.string())
                case "account": account = try once(account, r.string())
                case "head": head = try once(head, r.integer())
                default: throw Unsure()
                }
            }
            return .welcome(Welcome(device: try need(device), account: try need(account), head: try need(head)))
        case "push":
            var req: Int?, ops: [Op]?, cursor: Int??, limit: Int??
            try object { r, key throws(Unsure) in
                switch key {
                case "req": req = try once(req, r.integer())
                case "ops": ops = try once(ops, r.array { r throws(Unsure) in try r.op() })
                case "cursor": cursor = try once(cursor, r.optional { r throws(Unsure) in try r.integer() })
                case "limit": limit = try once(limit, r.optional { r throws(Unsure) in try r.integer() })
                default: throw Unsure()
                }
            }
            return .push(Push(req: try need(req), ops: try need(ops), cursor: cursor ?? nil, limit: limit ?? nil))
        case "pushResult":
            var req: Int?, results: [OpResult]?, page: Page??
            try object { r, key throws(Unsure) in
                switch key {
                case "req": req = try once(req, r.integer())
                case "results": results = try once(results, r.array { r throws(Unsure) in try r.opResult() })
                case "page": page = try once(page, r.optional { r throws(Unsure) in try r.page() })
                default: throw Unsure()
                }
            }
            return .pushResult(PushResult(req: try need(req), results: try need(results), page: page ?? nil))
        case "pull":
            var req: Int?, cursor: Int?, limit: Int?, account: String??
            try object { r, key throws(Unsure) in
                switch key {
                case "req": req = try once(req, r.integer())
                case "cursor": cursor = try once(cursor, r.integer())
                case "limit": limit = try once(limit, r.integer())
                case "account": account = try once(account, r.optional { r throws(Unsure) in try r.string() })
                default: throw Unsure()
                }
            }
            return .pull(Pull(req: try need(req), cursor: try need(cursor), limit: try need(limit),
                              account: account ?? nil))
        case "page":
            return .page(try page())
        case "notice":
            var account: String?, head: Int?, origin: String?, changes: [ChangeRef]?
            try object { r, key throws(Unsure) in
                switch key {
                case "account": account = try once(account, r.string())
                case "head": head = try once(head, r.integer())
                case "origin": origin = try once(origin, r.string())
                case "changes": changes = try once(changes, r.array { r throws(Unsure) in try r.changeRef() })
                default: throw Unsure()
                }
            }
            return .notice(Notice(account: try need(account), head: try need(head), origin: try need(origin),
                                  changes: try need(changes)))
        case "register":
            let who = try credentials()
            return .register(Register(device: who.device, account: who.account, platform: who.platform,
                                      token: who.token))
        case "registered":
            var device: String?
            try object { r, key throws(Unsure) in
                guard key == "device" else { throw Unsure() }
                device = try once(device, r.string())
            }
            return .registered(Registered(device: try need(device)))
        case "deviceState":
            var device: String?, online: Bool?, app: AppState?, doze: Bool?, refreshOff: Bool?
            try object { r, key throws(Unsure) in
                switch key {
                case "device": device = try once(device, r.string())
                case "online": online = try once(online, r.boolean())
                case "app": app = try once(app, r.raw(AppState.self))
                case "doze": doze = try once(doze, r.boolean())
                case "refreshOff": refreshOff = try once(refreshOff, r.boolean())
                default: throw Unsure()
                }
            }
            return .deviceState(DeviceState(device: try need(device), online: try need(online), app: try need(app),
                                            doze: try need(doze), refreshOff: try need(refreshOff)))
        case "hint":
            var hint: String?, account: String?, head: Int?
            try object { r, key throws(Unsure) in
                switch key {
                case "hint": hint = try once(hint, r.string())
                case "account": account = try once(account, r.string())
                case "head": head = try once(head, r.integer())
                default: throw Unsure()
                }
            }
            return .hint(Hint(hint: try need(hint), account: try need(account), head: try need(head)))
        case "error":
            var req: Int??, code: ErrorCode?, message: String?
            try object { r, key throws(Unsure) in
                switch key {
                case "req": req = try once(req, r.optional { r throws(Unsure) in try r.integer() })
                case "code": code = try once(code, r.raw(ErrorCode.self))
                case "message": message = try once(message, r.string())
                default: throw Unsure()
                }
            }
            return .error(ErrorReply(req: req ?? nil, code: try need(code), message: try need(message)))
        case "control", "controlAck":
            return try freeForm(type)
        default:
            throw Unsure()
        }
    }

    /// control and controlAck carry free-form JSON values (args, data): the whole body is read by `JSONParser`,
    /// which reads JSON as `JSONChecker` and `JSONDecoder` do (its tests hold it to that), and taken only when it is
    /// valid UTF-8, an object of the struct's own keys, each of the type its decoder wants; anything else is the
    /// strict path's to judge. A launcher's steps and a quiesce's answers go this way, thousands of them in a big
    /// simulated run.
    private mutating func freeForm(_ type: String) throws(Unsure) -> Message {
        guard String(utf8Validating: text) != nil, case .object(let pairs)? = JSONParser.parse(text) else {
            throw Unsure()
        }
        offset = text.count
        var fields: [String: JSONValue] = [:]
        for (key, value) in pairs { fields[key] = value }
        if type == "control" {
            guard pairs.count == 3, case .int(let req)? = fields["req"], case .string(let command)? = fields["command"],
                  case .object(let args)? = fields["args"]
            else { throw Unsure() }
            var dictionary: [String: JSONValue] = [:]
            for (key, value) in args { dictionary[key] = value }
            let control = Control(req: req, command: command, args: dictionary)
            // What `validate` refuses is the strict path's to say (as the other bodies' checks are).
            guard (try? control.validate()) != nil else { throw Unsure() }
            return .control(control)
        }
        guard case .int(let req)? = fields["req"], case .bool(let ok)? = fields["ok"],
              case .string(let detail)? = fields["detail"], pairs.count == (fields["data"] == nil ? 3 : 4)
        else { throw Unsure() }
        let data = fields["data"].flatMap { $0 == .null ? nil : $0 }
        return .controlAck(ControlAck(req: req, ok: ok, detail: detail, data: data))
    }

    // MARK: - Nested bodies

    /// A device's credentials, the whole body of a `hello` and of a `register`: each key once, none missing.
    private mutating func credentials() throws(Unsure)
        -> (device: String, account: String, token: String, platform: Platform)
    {
        var device: String?, account: String?, token: String?, platform: Platform?
        try object { r, key throws(Unsure) in
            switch key {
            case "device": device = try once(device, r.string())
            case "account": account = try once(account, r.string())
            case "token": token = try once(token, r.string())
            case "platform": platform = try once(platform, r.raw(Platform.self))
            default: throw Unsure()
            }
        }
        return (try need(device), try need(account), try need(token), try need(platform))
    }

    private mutating func op() throws(Unsure) -> Op {
        var key: String?, draft: String?, action: DraftAction?, base: Int?, title: String??, body: String??
        try object { r, name throws(Unsure) in
            switch name {
            case "key": key = try once(key, r.string())
            case "draft": draft = try once(draft, r.string())
            case "action": action = try once(action, r.raw(DraftAction.self))
            case "base": base = try once(base, r.integer())
            case "title": title = try once(title, r.optional { r throws(Unsure) in try r.string() })
            case "body": body = try once(body, r.optional { r throws(Unsure) in try r.string() })
            default: throw Unsure()
            }
        }
        return Op(key: try need(key), draft: try need(draft), action: try need(action), base: try need(base),
                  title: title ?? nil, body: body ?? nil)
    }

    /// A page's object: a `page` message's body, or a `pushResult`'s `page`.
    private mutating func page() throws(Unsure) -> Page {
        var req: Int?, changes: [Change]?, next: Int?, head: Int?
        try object { r, key throws(Unsure) in
            switch key {
            case "req": req = try once(req, r.integer())
            case "changes": changes = try once(changes, r.array { r throws(Unsure) in try r.change() })
            case "next": next = try once(next, r.integer())
            case "head": head = try once(head, r.integer())
            default: throw Unsure()
            }
        }
        return Page(req: try need(req), changes: try need(changes), next: try need(next), head: try need(head))
    }

    private mutating func opResult() throws(Unsure) -> OpResult {
        var key: String?, outcome: Outcome?, seq: Int??, version: Int??, conflict: Bool??, reason: String??
        try object { r, name throws(Unsure) in
            switch name {
            case "key": key = try once(key, r.string())
            case "outcome": outcome = try once(outcome, r.raw(Outcome.self))
            case "seq": seq = try once(seq, r.optional { r throws(Unsure) in try r.integer() })
            case "version": version = try once(version, r.optional { r throws(Unsure) in try r.integer() })
            case "conflict": conflict = try once(conflict, r.optional { r throws(Unsure) in try r.boolean() })
            case "reason": reason = try once(reason, r.optional { r throws(Unsure) in try r.string() })
            default: throw Unsure()
            }
        }
        return OpResult(key: try need(key), outcome: try need(outcome), seq: seq ?? nil, version: version ?? nil,
                        conflict: conflict ?? nil, reason: reason ?? nil)
    }

    private mutating func change() throws(Unsure) -> Change {
        var seq: Int?, draft: String?, action: DraftAction?, version: Int?, title: String??, body: String??
        var origin: String?, key: String?, conflict: Bool?
        try object { r, name throws(Unsure) in
            switch name {
            case "seq": seq = try once(seq, r.integer())
            case "draft": draft = try once(draft, r.string())
            case "action": action = try once(action, r.raw(DraftAction.self))
            case "version": version = try once(version, r.integer())
            case "title": title = try once(title, r.optional { r throws(Unsure) in try r.string() })
            case "body": body = try once(body, r.optional { r throws(Unsure) in try r.string() })
            case "origin": origin = try once(origin, r.string())
            case "key": key = try once(key, r.string())
            case "conflict": conflict = try once(conflict, r.boolean())
            default: throw Unsure()
            }
        }
        return Change(seq: try need(seq), draft: try need(draft), action: try need(action),
                      version: try need(version), title: title ?? nil, body: body ?? nil, origin: try need(origin),
                      key: try need(key), conflict: try need(conflict))
    }

    private mutating func changeRef() throws(Unsure) -> ChangeRef {
        var seq: Int?, draft: String?, version: Int?
        try object { r, name throws(Unsure) in
            switch name {
            case "seq": seq = try once(seq, r.integer())
            case "draft": draft = try once(draft, r.string())
            case "version": version = try once(version, r.integer())
            default: throw Unsure()
            }
        }
        return ChangeRef(seq: try need(seq), draft: try need(draft), version: try need(version))
    }

    // MARK: - Grammar

    private var peek: UInt8 { offset < text.count ? text[offset] : 0 }

    private mutating func skipWhitespace() { JSONScan.skipWhitespace(text, &offset) }

    private mutating func consume(_ byte: UInt8) throws(Unsure) {
        skipWhitespace()
        guard peek == byte else { throw Unsure() }
        offset += 1
    }

    /// Reads `{ "key": value, … }`, handing each key to `field`, which must read its value through the reader it
    /// is given (the reader is busy reading the object, so it is lent, not captured).
    private mutating func object(_ field: (inout BodyReader, String) throws(Unsure) -> Void) throws(Unsure) {
        try consume(UInt8(ascii: "{"))
        if JSONScan.closesAtOnce(UInt8(ascii: "}"), text, &offset) { return }
        while true {
            skipWhitespace()
            let key = try string(allowEscapes: false)
            try consume(UInt8(ascii: ":"))
            try field(&self, key)
            switch JSONScan.separator(UInt8(ascii: "}"), text, &offset) {
            case .comma: continue
            case .close: return
            case .other: throw Unsure()
            }
        }
    }

    private mutating func array<T>(_ element: (inout BodyReader) throws(Unsure) -> T) throws(Unsure) -> [T] {
        try consume(UInt8(ascii: "["))
        var items: [T] = []
        if JSONScan.closesAtOnce(UInt8(ascii: "]"), text, &offset) { return items }
        while true {
            items.append(try element(&self))
            switch JSONScan.separator(UInt8(ascii: "]"), text, &offset) {
            case .comma: continue
            case .close: return items
            case .other: throw Unsure()
            }
        }
    }

    /// `null` as nil (JSONDecoder reads an explicit null in an optional field as absent), else the value.
    private mutating func optional<T>(_ value: (inout BodyReader) throws(Unsure) -> T) throws(Unsure) -> T? {
        skipWhitespace()
        if peek == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        return try value(&self)
    }

    private mutating func literal(_ word: StaticString) throws(Unsure) {
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard offset + bytes.count <= text.count else { throw Unsure() }
        for (index, byte) in bytes.enumerated() where text[offset + index] != byte { throw Unsure() }
        offset += bytes.count
    }

    private mutating func boolean() throws(Unsure) -> Bool {
        skipWhitespace()
        switch peek {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw Unsure()
        }
    }

    /// A plain integer: `-?(0|[1-9][0-9]*)` that fits an Int. A fraction, an exponent or `-0` is the strict path's.
    private mutating func integer() throws(Unsure) -> Int {
        skipWhitespace()
        let negative = peek == UInt8(ascii: "-")
        if negative { offset += 1 }
        let start = offset
        var value = 0
        while offset < text.count, text[offset] >= UInt8(ascii: "0"), text[offset] <= UInt8(ascii: "9") {
            let digit = Int(text[offset] - UInt8(ascii: "0"))
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            // Accumulated negatively when negative, so Int.min fits.
            let (next, overflow2) = negative
                ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            guard !overflow1 && !overflow2 else { throw Unsure() }
            value = next
            offset += 1
        }
        let digits = offset - start
        guard digits > 0, !(digits > 1 && text[start] == UInt8(ascii: "0")), !(negative && value == 0) else {
            throw Unsure()
        }
        switch peek {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): throw Unsure()
        default: return value
        }
    }

    private mutating func raw<E: RawRepresentable>(_: E.Type) throws(Unsure) -> E where E.RawValue == String {
        guard let value = E(rawValue: try string()) else { throw Unsure() }
        return value
    }

    private mutating func string() throws(Unsure) -> String {
        skipWhitespace()
        return try string(allowEscapes: true)
    }

    /// A string value: valid UTF-8, no raw control characters, escapes decoded (a surrogate pair becomes its
    /// character; an unpaired surrogate is the strict path's).
    private mutating func string(allowEscapes: Bool) throws(Unsure) -> String {
        guard peek == UInt8(ascii: "\"") else { throw Unsure() }
        offset += 1
        let start = offset
        // Eight plain bytes at a time (no quote, backslash, control or non-ASCII byte): most strings are all plain.
        if let base = text.baseAddress {
            while offset + 8 <= text.count {
                let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
                guard !JSONBytes.mayNeedAttention(word) else { break }
                offset += 8
            }
        }
        var high: UInt8 = 0
        while offset < text.count {
            let byte = text[offset]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: text[start..<offset])
                offset += 1
                // ASCII is always well-formed; only text with a byte at or above 0x80 is checked.
                if high < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let value = String(utf8Validating: slice) else { throw Unsure() }
                return value
            }
            high |= byte
            if byte == UInt8(ascii: "\\") {
                guard allowEscapes else { throw Unsure() }
                return try escapedString(from: start)
            }
            guard byte >= 0x20 else { throw Unsure() }
            offset += 1
        }
        throw Unsure()
    }

    private mutating func escapedString(from start: Int) throws(Unsure) -> String {
        var bytes = Array(UnsafeBufferPointer(rebasing: text[start..<offset]))
        var pendingHigh: UInt32?
        while offset < text.count {
            let byte = text[offset]
            if byte == UInt8(ascii: "\\") {
                offset += 1
                let kind = peek
                offset += 1
                if kind == UInt8(ascii: "u") {
                    let code = try need(JSONScan.hex4(text, &offset))
                    if let high = pendingHigh {
                        guard (0xDC00...0xDFFF).contains(code) else { throw Unsure() }
                        pendingHigh = nil
                        guard let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)) else {
                            throw Unsure()
                        }
                        bytes.append(contentsOf: String(scalar).utf8)
                    } else if (0xD800...0xDBFF).contains(code) {
                        pendingHigh = code
                    } else {
                        guard let scalar = Unicode.Scalar(code) else { throw Unsure() }
                        bytes.append(contentsOf: String(scalar).utf8)
                    }
                    continue
                }
                guard pendingHigh == nil, let escaped = JSONScan.escapedByte(kind) else { throw Unsure() }
                bytes.append(escaped)
                continue
            }
            guard pendingHigh == nil else { throw Unsure() }
            if byte == UInt8(ascii: "\"") {
                offset += 1
                let value = bytes.withUnsafeBufferPointer { String(utf8Validating: $0) }
                guard let value else { throw Unsure() }
                return value
            }
            guard byte >= 0x20 else { throw Unsure() }
            bytes.append(byte)
            offset += 1
        }
        throw Unsure()
    }
}
