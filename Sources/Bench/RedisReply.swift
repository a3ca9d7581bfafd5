import CHiredis

/// A reply, copied out of hiredis's tree (which is freed at once).
enum RedisReply: Equatable {
    case string([UInt8])
    case status(String)
    case integer(Int64)
    case array([RedisReply])
    case null
    case error(String)

    init(_ reply: UnsafePointer<redisReply>) {
        let r = reply.pointee
        func bytes() -> [UInt8] {
            guard let str = r.str, r.len > 0 else { return [] }
            return str.withMemoryRebound(to: UInt8.self,
                capacity: r.len) { Array(UnsafeBufferPointer(start: $0, count: r.len)) }
        }
        switch r.type {
        case REDIS_REPLY_STRING: self = .string(bytes())
        case REDIS_REPLY_STATUS: self = .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: self = .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(r.elements)
            for i in 0..<r.elements { if let item = r.element[i] { items.append(RedisReply(item)) } }
            self = .array(items)
        case REDIS_REPLY_ERROR: self = .error(String(decoding: bytes(), as: UTF8.self))
        default: self = .null
        }
    }

    var text: String? {
        switch self {
        case .string(let b): return String(decoding: b, as: UTF8.self)
        case .status(let s): return s
        default: return nil
        }
    }

    var bytes: [UInt8]? { if case .string(let b) = self { return b } else { return nil } }
    var items: [RedisReply]? { if case .array(let a) = self { return a } else { return nil } }
}
