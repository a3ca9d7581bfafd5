import Foundation

/// Encodes messages into frames and decodes frames into messages, strictly: anything that is not exactly a message
/// of this protocol version becomes a `ProtocolError`, never a crash.
public enum Codec {
    /// `[header, body]` for `message`.
    public static func encode(_ message: Message) -> [[UInt8]] {
        let header = Array("SL\(Limits.version) \(message.type)".utf8)
        return [header, body(of: message)]
    }

    /// The body frame of `message` alone: a sender of many messages of one type reuses their header frame.
    public static func body(of message: Message) -> [UInt8] {
        // The hot bodies are written by hand, byte for byte what JSONEncoder writes (CodecFastPathTests compare).
        if let bytes = BodyWriter.body(of: message) { return bytes }
        return foundationBody(of: message)
    }

    /// A page's body up to its last value, `{"changes":[…],"head":H,"next":N,"req":`: a server that answers many
    /// pulls with the same page encodes it once and appends each pull's req (`pageBody(prefix:req:)`).
    public static func pageBodyPrefix(changes: [Change], head: Int, next: Int) -> [UInt8] {
        var bytes = body(of: .page(Page(req: 0, changes: changes, next: next, head: head)))
        // `req` is the page's last key (keys are sorted): the body ends `"req":0}`.
        bytes.removeLast(2)
        return bytes
    }

    /// The body of a page whose prefix is `prefix` (`pageBodyPrefix`), for the pull numbered `req`: the same bytes
    /// `body(of:)` writes for that page.
    public static func pageBody(prefix: [UInt8], req: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(prefix.count + 21)
        bytes.append(contentsOf: prefix)
        bytes.append(contentsOf: String(req).utf8)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The body of `result` with `pageBody` as its page (a page's body as `pageBody(prefix:req:)` makes it, for the
    /// push's req): the same bytes `body(of:)` writes for `result` with that page.
    public static func pushResultBody(_ result: PushResult, pageBody: [UInt8]) -> [UInt8] {
        var writer = BodyWriter(capacity: 64 + result.results.count * 96 + pageBody.count)
        writer.pushResult(result, pageBody: pageBody)
        return writer.bytes
    }

    /// `body(of:)` written into `bytes`, replacing what it held: a sender of many messages reuses one buffer.
    public static func writeBody(of message: Message, into bytes: inout [UInt8]) {
        if !BodyWriter.write(message, into: &bytes) { bytes = foundationBody(of: message) }
    }

    /// The body as JSONEncoder writes it: the reference for `BodyWriter`, and the writer of free-form bodies.
    static func foundationBody(of message: Message) -> [UInt8] {
        switch message {
        case .hello(let m): return json(m)
        case .welcome(let m): return json(m)
        case .push(let m): return json(m)
        case .pushResult(let m): return json(m)
        case .pull(let m): return json(m)
        case .page(let m): return json(m)
        case .notice(let m): return json(m)
        case .register(let m): return json(m)
        case .registered(let m): return json(m)
        case .deviceState(let m): return json(m)
        case .hint(let m): return json(m)
        case .control(let m): return json(m)
        case .controlAck(let m): return json(m)
        case .error(let m): return json(m)
        }
    }

    private static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        // Sorted keys: the same message is the same bytes every time, so captures and examples can be compared.
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        // Bodies hold strings, integers, booleans and JSONValues (whose NaN and infinity encode as null): nothing
        // JSONEncoder refuses, so the fallback is never taken.
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// The message type named by a header frame, checked for form and version.
    public static func decodeHeader(_ frame: [UInt8]) throws(ProtocolError) -> String {
        // Every well-formed header is one of a few byte strings: look it up before taking it apart.
        if let type = knownHeaders[frame] { return type }
        guard frame.count <= Limits.maxHeaderBytes else { throw .headerTooLong(bytes: frame.count) }
        guard let text = frame.withUnsafeBufferPointer({ String(utf8Validating: $0) }) else {
            throw .badHeader(String(decoding: frame, as: UTF8.self))
        }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasPrefix("SL"), !parts[1].isEmpty else { throw .badHeader(text) }
        let versionText = parts[0].dropFirst(2)
        // Canonical digits only: `Int("+1")` would let "SL+1" through as version 1, and "SL01" is not "SL1".
        guard !versionText.isEmpty, versionText.count <= 9,
            versionText.allSatisfy({ $0.isASCII && $0.isNumber }), let version = Int(versionText),
            String(version) == versionText
        else { throw .badHeader(text) }
        guard version == Limits.version else { throw .unsupportedVersion(version) }
        let type = String(parts[1])
        guard Message.allTypes.contains(type) else { throw .unknownType(type) }
        return type
    }

    /// `SL1 <type>` for every type, as bytes.
    private static let knownHeaders: [[UInt8]: String] = Dictionary(
        uniqueKeysWithValues: Message.allTypes.map { (Array("SL\(Limits.version) \($0)".utf8), $0) })

    /// Decodes `[header, body]` into a message.
    public static func decode(_ frames: [[UInt8]]) throws(ProtocolError) -> Message {
        guard let headerFrame = frames.first else { throw .empty }
        let type = try decodeHeader(headerFrame)
        guard frames.count >= 2 else { throw .missingBody(type: type) }
        guard frames.count == 2 else { throw .tooManyFrames(count: frames.count) }
        let body = frames[1]
        guard body.count <= Limits.maxBodyBytes else { throw .oversized(bytes: body.count, limit: Limits.maxBodyBytes) }
        // Well-formed hot bodies are read in one pass; anything the fast reader is unsure of takes the strict path,
        // which accepts or refuses it exactly as it always has.
        if let message = BodyReader.decode(type: type, body: body) {
            try message.validate()
            return message
        }
        return try strictDecode(type: type, body: body)
    }

    /// The strict path: `JSONChecker` then `JSONDecoder`, and every `ProtocolError` kind.
    static func strictDecode(type: String, body: [UInt8]) throws(ProtocolError) -> Message {
        switch type {
        case "hello": return .hello(try decodeBody(Hello.self, type, body))
        case "welcome": return .welcome(try decodeBody(Welcome.self, type, body))
        case "push": return .push(try decodeBody(Push.self, type, body))
        case "pushResult": return .pushResult(try decodeBody(PushResult.self, type, body))
        case "pull": return .pull(try decodeBody(Pull.self, type, body))
        case "page": return .page(try decodeBody(Page.self, type, body))
        case "notice": return .notice(try decodeBody(Notice.self, type, body))
        case "register": return .register(try decodeBody(Register.self, type, body))
        case "registered": return .registered(try decodeBody(Registered.self, type, body))
        case "deviceState": return .deviceState(try decodeBody(DeviceState.self, type, body))
        case "hint": return .hint(try decodeBody(Hint.self, type, body))
        case "control": return .control(try decodeBody(Control.self, type, body))
        case "controlAck": return .controlAck(try decodeBody(ControlAck.self, type, body))
        case "error": return .error(try decodeBody(ErrorReply.self, type, body))
        default: throw .unknownType(type)
        }
    }

    /// Decodes a message and, on failure, the error reply to send back instead.
    public static func decodeOrReply(_ frames: [[UInt8]]) -> Result<Message, ProtocolError> {
        do { return .success(try decode(frames)) } catch { return .failure(error) }
    }

    static func decodeBody<T: MessageBody>(_: T.Type, _ type: String, _ body: [UInt8]) throws(ProtocolError) -> T {
        guard String(validating: body, as: UTF8.self) != nil else { throw .notUTF8(type: type) }
        do {
            try JSONChecker.check(body, schema: KeySchema.bodies[type] ?? .any)
        } catch {
            switch error {
            case .syntax(let detail): throw .malformedJSON(type: type, detail: detail)
            case .notAnObject: throw .notAnObject(type: type)
            case .tooDeep: throw .malformedJSON(type: type, detail: "nested more than \(Limits.maxDepth) levels deep")
            case .unknownKey(let path): throw .unknownField(type: type, field: path)
            case .duplicateKey(let path): throw .malformedJSON(type: type, detail: "key \"\(path)\" appears twice")
            }
        }
        let value: T
        do {
            value = try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw translate(error, type: type)
        } catch {
            throw .malformedJSON(type: type, detail: "\(error)")
        }
        try value.validate()
        return value
    }

    static func translate(_ error: DecodingError, type: String) -> ProtocolError {
        switch error {
        case .keyNotFound(let key, let context):
            return .missingField(type: type, field: codingPathText(context.codingPath + [key]))
        case .typeMismatch(let expected, let context):
            guard !context.codingPath.isEmpty else { return .notAnObject(type: type) }
            return .wrongType(type: type, field: codingPathText(context.codingPath), expected: describe(expected))
        case .valueNotFound(let expected, let context):
            return .wrongType(
                type: type, field: codingPathText(context.codingPath), expected: "\(describe(expected)), not null")
        case .dataCorrupted(let context):
            guard !context.codingPath.isEmpty else {
                // The checker passed the text as JSON; Foundation refuses, without a path, what it cannot represent.
                return .malformedJSON(
                    type: type,
                    detail: "a value fits no field: a fraction or an out-of-range number where an integer belongs, "
                        + "or an unpaired surrogate escape")
            }
            let field = codingPathText(context.codingPath)
            return .invalidValue(type: type, field: field, reason: "is invalid: \(context.debugDescription)")
        @unknown default:
            return .malformedJSON(type: type, detail: "\(error)")
        }
    }

    /// A coding path as a reader writes it: `ops[2].base`.
    public static func codingPathText(_ path: [CodingKey]) -> String {
        var out = ""
        for key in path {
            if let index = key.intValue {
                out += "[\(index)]"
            } else {
                out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return out
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: return "an integer"
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Double.Type: return "a number"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return name
        }
    }
}
