/// A failed hiredis call or an error reply, naming the command.
struct RedisError: Error, CustomStringConvertible {
    let call: String
    let detail: String

    init(_ call: String, _ detail: String) {
        self.call = call
        self.detail = detail
    }

    var description: String { "redis: \(call) failed: \(detail)" }
}
