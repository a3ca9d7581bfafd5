import Foundation

/// Encodes messages into frames and decodes frames into messages, strictly: anything that is not exactly a message
/// of this protocol version becomes a `ProtocolError`, never a crash.
public enum Codec {
    /// `[header, body]` for `message`.
    public static func encode(_ message: Message) -> [[UInt8]] {
        let header = Array("SL\(Limits.version) \(message.type)".utf8)
        return [header, body(of: message)]
    }

    static func body(of message: Message) -> [UInt8] {
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
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding our own Codable structs of strings, numbers and arrays cannot fail.
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// The message type named by a header frame, checked for form and version.
    public static func decodeHeader(_ frame: [UInt8]) throws(ProtocolError) -> String {
        guard frame.count <= Limits.maxHeaderBytes else { throw .headerTooLong(bytes: frame.count) }
        guard let text = String(validating: frame, as: UTF8.self) else {
            throw .badHeader(String(decoding: frame, as: UTF8.self))
        }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasPrefix("SL"), !parts[1].isEmpty else { throw .badHeader(text) }
        let versionText = parts[0].dropFirst(2)
        guard !versionText.isEmpty, versionText.allSatisfy(\.isASCII), let version = Int(versionText), version >= 0
        else { throw .badHeader(text) }
        guard version == Limits.version else { throw .unsupportedVersion(version) }
        let type = String(parts[1])
        guard Message.allTypes.contains(type) else { throw .unknownType(type) }
        return type
    }

    /// Decodes `[header, body]` into a message.
    public static func decode(_ frames: [[UInt8]]) throws(ProtocolError) -> Message {
        guard let headerFrame = frames.first else { throw .empty }
        let type = try decodeHeader(headerFrame)
        guard frames.count >= 2 else { throw .missingBody(type: type) }
        guard frames.count == 2 else { throw .tooManyFrames(count: frames.count) }
        let body = frames[1]
        guard body.count <= Limits.maxBodyBytes else { throw .oversized(bytes: body.count, limit: Limits.maxBodyBytes) }
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
        let firstByte = body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 })
        let decoder = JSONDecoder()
        let value: T
        do {
            value = try decoder.decode(Strict<T>.self, from: Data(body)).value
        } catch StrictFailure.notAnObject {
            throw .notAnObject(type: type)
        } catch StrictFailure.unknownField(let field) {
            throw .unknownField(type: type, field: field)
        } catch let error as DecodingError {
            throw translate(error, type: type, looksLikeObject: firstByte == UInt8(ascii: "{"))
        } catch {
            throw .malformedJSON(type: type, detail: "\(error)")
        }
        try value.validate()
        return value
    }

    static func translate(_ error: DecodingError, type: String, looksLikeObject: Bool) -> ProtocolError {
        func path(_ codingPath: [CodingKey], _ last: CodingKey? = nil) -> String {
            var keys = codingPath
            if let last { keys.append(last) }
            var out = ""
            for key in keys {
                if let index = key.intValue {
                    out += "[\(index)]"
                } else {
                    out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return out
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .missingField(type: type, field: path(context.codingPath, key))
        case .typeMismatch(let expected, let context):
            if context.codingPath.isEmpty { return looksLikeObject ? .malformedJSON(type: type, detail: context.debugDescription) : .notAnObject(type: type) }
            return .wrongType(type: type, field: path(context.codingPath), expected: describe(expected))
        case .valueNotFound(let expected, let context):
            return .wrongType(type: type, field: path(context.codingPath), expected: "\(describe(expected)), not null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return .malformedJSON(type: type, detail: context.underlyingError.map { "\($0)" } ?? context.debugDescription)
            }
            return .invalidValue(type: type, field: path(context.codingPath), reason: "has an unknown value")
        @unknown default:
            return .malformedJSON(type: type, detail: "\(error)")
        }
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

/// Decodes a body after checking that it carries no key outside `T.fields`.
private struct Strict<T: MessageBody>: Decodable {
    let value: T

    init(from decoder: Decoder) throws {
        let container: KeyedDecodingContainer<AnyKey>
        do {
            container = try decoder.container(keyedBy: AnyKey.self)
        } catch {
            throw StrictFailure.notAnObject
        }
        for key in container.allKeys where !T.fields.contains(key.stringValue) {
            throw StrictFailure.unknownField(key.stringValue)
        }
        value = try T(from: decoder)
    }
}

private enum StrictFailure: Error {
    case notAnObject
    case unknownField(String)
}
