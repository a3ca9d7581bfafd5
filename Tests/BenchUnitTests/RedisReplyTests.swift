import CHiredis
import Testing
@testable import Bench

/// hiredis's reply tree copied into Swift values (the tree is freed at once by the connection).
@Suite struct RedisReplyTests {
    /// A reply of `type` holding `text` (string, status and error replies keep it in `str`).
    private func withReply<T>(type: Int32, text: String = "", integer: Int64 = 0,
                              elements: [UnsafeMutablePointer<redisReply>?] = [],
                              _ body: (UnsafePointer<redisReply>) -> T) -> T {
        var bytes = Array(text.utf8CString)
        var children = elements
        return bytes.withUnsafeMutableBufferPointer { str in
            children.withUnsafeMutableBufferPointer { list in
                var reply = redisReply(type: type, integer: integer, len: text.utf8.count, str: str.baseAddress,
                                       elements: list.count, element: list.baseAddress)
                return withUnsafePointer(to: &reply) { body($0) }
            }
        }
    }

    @Test("strings keep their bytes, status and error replies their text, integers their value")
    func scalars() {
        withReply(type: REDIS_REPLY_STRING, text: "1796-0") { #expect(RedisReply($0) == .string(Array("1796-0".utf8))) }
        withReply(type: REDIS_REPLY_STATUS, text: "OK") { #expect(RedisReply($0) == .status("OK")) }
        withReply(type: REDIS_REPLY_ERROR, text: "NOSCRIPT No matching script") {
            #expect(RedisReply($0) == .error("NOSCRIPT No matching script"))
        }
        withReply(type: REDIS_REPLY_INTEGER, integer: -42) { #expect(RedisReply($0) == .integer(-42)) }
        withReply(type: REDIS_REPLY_NIL) { #expect(RedisReply($0) == .null) }
        withReply(type: REDIS_REPLY_STRING, text: "") { #expect(RedisReply($0) == .string([])) }
    }

    @Test("arrays are copied element by element, nested ones too")
    func arrays() {
        let id = UnsafeMutablePointer<redisReply>.allocate(capacity: 1)
        let missing = UnsafeMutablePointer<redisReply>.allocate(capacity: 1)
        defer { id.deallocate(); missing.deallocate() }
        let idText = Array("1-0".utf8CString)
        idText.withUnsafeBufferPointer { text in
            id.initialize(to: redisReply(type: REDIS_REPLY_STRING, integer: 0, len: 3,
                                         str: UnsafeMutablePointer(mutating: text.baseAddress), elements: 0,
                                         element: nil))
            missing.initialize(to: redisReply(type: REDIS_REPLY_NIL, integer: 0, len: 0, str: nil, elements: 0,
                element: nil))
            withReply(type: REDIS_REPLY_ARRAY, elements: [id, missing]) { reply in
                let value = RedisReply(reply)
                #expect(value == .array([.string(Array("1-0".utf8)), .null]))
                #expect(value.items?.first?.text == "1-0")
            }
        }
    }
}
