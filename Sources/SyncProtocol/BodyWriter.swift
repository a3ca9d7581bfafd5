/// Writes message bodies straight into bytes: the same bytes `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` writes (keys in byte order, absent optionals left out, the same escapes), at a fraction
/// of its cost. The wire format is a contract, so `CodecFastPathTests` compares the two on every sample and on
/// every character that needs escaping.
///
/// Each message writes its keys in sorted order by hand; a new field must be placed where its key sorts.
struct BodyWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the current object already holds a key (so the next needs a comma).
    private var needsComma = false

    init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

    // MARK: - Structure

    mutating func beginObject() {
        comma()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// `"key":` and a value already written by a `BodyWriter` (a cached page's body), as it is.
    mutating func field(_ key: StaticString, written value: [UInt8]) {
        self.key(key)
        bytes.append(contentsOf: value)
    }

    mutating func beginArray(_ key: StaticString) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    private mutating func comma() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// `"key":` (keys are plain ASCII identifiers: nothing to escape).
    mutating func key(_ key: StaticString) {
        comma()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    /// One byte or a literal, as they are (the free-form writer's brackets, separators and `null`/`true`/`false`).
    mutating func append(_ byte: UInt8) { bytes.append(byte) }

    mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    // MARK: - Fields

    mutating func field(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    mutating func field(_ key: StaticString, _ value: String?) {
        if let value { field(key, value) }
    }

    mutating func field(_ key: StaticString, _ value: Int) {
        self.key(key)
        integer(value)
    }

    mutating func field(_ key: StaticString, _ value: Int?) {
        if let value { field(key, value) }
    }

    mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        if value {
            bytes.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            bytes.append(contentsOf: [
                UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e"),
            ])
        }
    }

    mutating func field(_ key: StaticString, _ value: Bool?) {
        if let value { field(key, value) }
    }

    mutating func field<E: RawRepresentable>(_ key: StaticString, _ value: E) where E.RawValue == String {
        field(key, value.rawValue)
    }

    // MARK: - Scalars

    mutating func integer(_ value: Int) {
        JSONValue.writeInteger(value, to: &bytes)
    }

    /// A string as JSONEncoder writes it: `"` and `\` escaped, `\b \f \n \r \t` short, other controls as `\u00xx`,
    /// everything else (slashes, non-ASCII) as it is.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            var plain = 0
            // Eight bytes at a time while none can need an escape: most strings need none.
            if let base = utf8.baseAddress {
                while plain + 8 <= utf8.count {
                    let word = UnsafeRawPointer(base + plain).loadUnaligned(as: UInt64.self)
                    guard !JSONBytes.mayNeedAttention(word) else { break }
                    plain += 8
                }
            }
            for index in plain..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                        hex[Int(byte & 0xF)],
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

// MARK: - Bodies, keys in sorted order

extension BodyWriter {
    /// The body of `message`, or nil when it is left to JSONEncoder: a `control` or `controlAck` whose free-form
    /// values hold a double or an object with a key twice (`BodyWriter+FreeForm.swift`).
    static func body(of message: Message) -> [UInt8]? {
        var w = BodyWriter()
        return write(message, to: &w) ? w.bytes : nil
    }

    /// Writes the body of `message` into `bytes` (replacing what it held, keeping its memory); false, with `bytes`
    /// empty, for a body left to JSONEncoder.
    static func write(_ message: Message, into bytes: inout [UInt8]) -> Bool {
        if case .hint(let hint) = message, writePlainHint(hint, into: &bytes) { return true }
        bytes.removeAll(keepingCapacity: true)
        var w = BodyWriter(capacity: 0)
        swap(&w.bytes, &bytes)
        defer { swap(&w.bytes, &bytes) }
        guard write(message, to: &w) else {
            w.bytes.removeAll(keepingCapacity: true)
            return false
        }
        return true
    }

    /// The body of `hint`, `{"account":…,"head":…,"hint":…}`, stored straight into the memory of `bytes` when neither
    /// string needs escaping (ids never do): the broker sends one per device per notice. False, `bytes` untouched,
    /// when one does.
    static func writePlainHint(_ hint: Hint, into bytes: inout [UInt8]) -> Bool {
        var account = hint.account
        var id = hint.hint
        return account.withUTF8 { account in
            id.withUTF8 { id in
                guard JSONValue.isPlainString(account), JSONValue.isPlainString(id) else { return false }
                // Room for the longest spelling, made by lengthening the array (its memory stays), cut back after.
                let longest = 32 + 20 + account.count + id.count
                while bytes.count < longest {
                    let room: StaticString = "................................................................"
                    let count = min(longest - bytes.count, room.utf8CodeUnitCount)
                    bytes.append(contentsOf: UnsafeBufferPointer(start: room.utf8Start, count: count))
                }
                let written = bytes.withUnsafeMutableBufferPointer { buffer in
                    var out = buffer.baseAddress!
                    func put(_ text: StaticString) {
                        out.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
                        out += text.utf8CodeUnitCount
                    }
                    func put(_ text: UnsafeBufferPointer<UInt8>) {
                        if let source = text.baseAddress { out.update(from: source, count: text.count) }
                        out += text.count
                    }
                    put("{\"account\":\"")
                    put(account)
                    put("\",\"head\":")
                    out += JSONValue.writeDecimal(hint.head, to: out)
                    put(",\"hint\":\"")
                    put(id)
                    put("\"}")
                    return out - buffer.baseAddress!
                }
                bytes.removeLast(bytes.count - written)
                return true
            }
        }
    }

    /// Appends the body of `message`; false for a body left to JSONEncoder.
    private static func write(_ message: Message, to w: inout BodyWriter) -> Bool {
        switch message {
        case .hello(let m):
            w.credentials(account: m.account, device: m.device, platform: m.platform, token: m.token)
        case .welcome(let m):
            w.beginObject()
            w.field("account", m.account)
            w.field("device", m.device)
            w.field("head", m.head)
            w.endObject()
        case .push(let m):
            w = BodyWriter(capacity: 64 + m.ops.count * 160)
            w.beginObject()
            w.field("cursor", m.cursor)
            w.field("limit", m.limit)
            w.beginArray("ops")
            for op in m.ops { w.op(op) }
            w.endArray()
            w.field("req", m.req)
            w.endObject()
        case .pushResult(let m):
            w = BodyWriter(capacity: 64 + m.results.count * 96 + (m.page?.changes.count ?? 0) * 200)
            w.pushResult(m, pageBody: nil)
        case .pull(let m):
            w.beginObject()
            w.field("account", m.account)
            w.field("cursor", m.cursor)
            w.field("limit", m.limit)
            w.field("req", m.req)
            w.endObject()
        case .page(let m):
            w = BodyWriter(capacity: 64 + m.changes.count * 200)
            w.page(m)
        case .notice(let m):
            w.beginObject()
            w.field("account", m.account)
            w.beginArray("changes")
            for change in m.changes {
                w.beginObject()
                w.field("draft", change.draft)
                w.field("seq", change.seq)
                w.field("version", change.version)
                w.endObject()
            }
            w.endArray()
            w.field("head", m.head)
            w.field("origin", m.origin)
            w.endObject()
        case .register(let m):
            w.credentials(account: m.account, device: m.device, platform: m.platform, token: m.token)
        case .registered(let m):
            w.beginObject()
            w.field("device", m.device)
            w.endObject()
        case .deviceState(let m):
            w.beginObject()
            w.field("app", m.app)
            w.field("device", m.device)
            w.field("doze", m.doze)
            w.field("online", m.online)
            w.field("refreshOff", m.refreshOff)
            w.endObject()
        case .hint(let m):
            w.beginObject()
            w.field("account", m.account)
            w.field("head", m.head)
            w.field("hint", m.hint)
            w.endObject()
        case .error(let m):
            w.beginObject()
            w.field("code", m.code)
            w.field("message", m.message)
            w.field("req", m.req)
            w.endObject()
        case .control(let m):
            return w.control(m)
        case .controlAck(let m):
            return w.controlAck(m)
        }
        return true
    }

    /// A device's credentials, the whole body of a `hello` (to the server) and of a `register` (to the broker).
    private mutating func credentials(account: String, device: String, platform: Platform, token: String) {
        beginObject()
        field("account", account)
        field("device", device)
        field("platform", platform)
        field("token", token)
        endObject()
    }

    /// A page's object: a `page` message's body, or a `pushResult`'s `page`.
    mutating func page(_ m: Page) {
        beginObject()
        beginArray("changes")
        for change in m.changes { self.change(change) }
        endArray()
        field("head", m.head)
        field("next", m.next)
        field("req", m.req)
        endObject()
    }

    /// A `pushResult`'s body; its `page` is `pageBody` when given (a page's body encoded once, `PageCache`).
    mutating func pushResult(_ m: PushResult, pageBody: [UInt8]?) {
        beginObject()
        if let pageBody {
            field("page", written: pageBody)
        } else if let page = m.page {
            key("page")
            needsComma = false
            self.page(page)
        }
        field("req", m.req)
        beginArray("results")
        for result in m.results { opResult(result) }
        endArray()
        endObject()
    }

    private mutating func op(_ op: Op) {
        beginObject()
        field("action", op.action)
        field("base", op.base)
        field("body", op.body)
        field("draft", op.draft)
        field("key", op.key)
        field("title", op.title)
        endObject()
    }

    private mutating func opResult(_ result: OpResult) {
        beginObject()
        field("conflict", result.conflict)
        field("key", result.key)
        field("outcome", result.outcome)
        field("reason", result.reason)
        field("seq", result.seq)
        field("version", result.version)
        endObject()
    }

    private mutating func change(_ change: Change) {
        beginObject()
        field("action", change.action)
        field("body", change.body)
        field("conflict", change.conflict)
        field("draft", change.draft)
        field("key", change.key)
        field("origin", change.origin)
        field("seq", change.seq)
        field("title", change.title)
        field("version", change.version)
        endObject()
    }
}
