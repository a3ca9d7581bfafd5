/// Why a message was refused by the decoder. Each case names what was wrong and where.
public enum ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A message with no frames at all.
    case empty
    /// More frames than `[header, body]`.
    case tooManyFrames(count: Int)
    /// The header frame is longer than any header can be.
    case headerTooLong(bytes: Int)
    /// The header frame is not `SL<version> <type>`.
    case badHeader(String)
    /// A protocol version this build does not speak.
    case unsupportedVersion(Int)
    /// A message type nobody defined.
    case unknownType(String)
    /// A header without its body frame.
    case missingBody(type: String)
    /// The body frame is over the size limit.
    case oversized(bytes: Int, limit: Int)
    /// The body is not UTF-8.
    case notUTF8(type: String)
    /// The body is not JSON (RFC 8259, exactly), or JSON refused before typing it: a key twice in one object, nested
    /// deeper than `Limits.maxDepth`, or a number that fits no integer field.
    case malformedJSON(type: String, detail: String)
    /// The body is JSON but not an object.
    case notAnObject(type: String)
    case missingField(type: String, field: String)
    case wrongType(type: String, field: String, expected: String)
    case unknownField(type: String, field: String)
    /// A field of the right type whose value is out of bounds or unknown.
    case invalidValue(type: String, field: String, reason: String)
    /// A well-formed message this receiver does not accept (a hint sent to the server, say).
    case unexpected(type: String, receiver: String)

    public var description: String {
        switch self {
        case .empty: return "empty message: expected frames [header, body]"
        case .tooManyFrames(let count): return "\(count) frames: expected exactly 2, [header, body]"
        case .headerTooLong(let bytes):
            return "header frame is \(bytes) bytes, limit \(Limits.maxHeaderBytes): expected \"SL1 <type>\""
        case .badHeader(let text): return "bad header \(text.debugDescription): expected \"SL1 <type>\""
        case .unsupportedVersion(let version):
            return "protocol version \(version) is not supported: this build speaks \(Limits.version)"
        case .unknownType(let type): return "unknown message type \(type.debugDescription)"
        case .missingBody(let type): return "\(type): header without a body frame"
        case .oversized(let bytes, let limit): return "body is \(bytes) bytes, limit \(limit)"
        case .notUTF8(let type): return "\(type): body is not UTF-8"
        case .malformedJSON(let type, let detail): return "\(type): bad JSON body: \(detail)"
        case .notAnObject(let type): return "\(type): body must be a JSON object"
        case .missingField(let type, let field): return "\(type): missing field \"\(field)\""
        case .wrongType(let type, let field, let expected): return "\(type): field \"\(field)\" must be \(expected)"
        case .unknownField(let type, let field): return "\(type): unknown field \"\(field)\""
        case .invalidValue(let type, let field, let reason): return "\(type): field \"\(field)\" \(reason)"
        case .unexpected(let type, let receiver): return "\(receiver) does not accept \(type) messages"
        }
    }

    /// The error code to answer with.
    public var code: ErrorCode {
        switch self {
        case .empty, .tooManyFrames, .headerTooLong, .badHeader, .missingBody: return .badFrame
        case .unsupportedVersion: return .unsupportedVersion
        case .unknownType: return .unknownType
        case .oversized: return .tooLarge
        case .notUTF8, .malformedJSON, .notAnObject, .missingField, .wrongType, .unknownField: return .malformed
        case .invalidValue: return .invalid
        case .unexpected: return .unexpected
        }
    }
}

/// The protocol's version and size limits.
public enum Limits {
    public static let version = 1
    public static let maxHeaderBytes = 32
    /// Largest body frame (1 MiB): a full page of changes fits; anything larger is refused before parsing.
    public static let maxBodyBytes = 1 << 20
    public static let maxOpsPerPush = 500
    public static let maxPageLimit = 1_000
    public static let maxIDBytes = 128
    /// Largest draft body the server applies; a larger op is `rejected` (permanent), not a protocol error.
    public static let maxDraftBodyBytes = 64 * 1024
    public static let maxTitleBytes = 256
    /// Deepest nesting of objects and arrays a body may have. Messages need 3 (push → ops → op); the rest is room for
    /// control args. Refused before parsing, so no input can exhaust a thread's stack in the decoder.
    public static let maxDepth = 32

    static func checkID(_ value: String, _ type: String, _ field: String) throws(ProtocolError) {
        if value.isEmpty { throw .invalidValue(type: type, field: field, reason: "is empty") }
        if value.utf8.count > maxIDBytes {
            throw .invalidValue(type: type, field: field, reason: "is longer than \(maxIDBytes) bytes")
        }
    }
}
