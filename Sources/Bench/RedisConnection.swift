import CHiredis
import Foundation

/// A blocking connection to redis-server: commands with binary-safe arguments, and, for a connection that has
/// subscribed, the next pushed message with a timeout. One connection is used by one thread; freed in deinit.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>

    init(host: String, port: Int) throws {
        guard let made = redisConnectWithTimeout(host, Int32(port), timeval(tv_sec: 10, tv_usec: 0)) else {
            throw RedisError("redisConnect(\(host):\(port))", "could not allocate a context")
        }
        if made.pointee.err != 0 {
            let detail = Self.errorText(made)
            redisFree(made)
            throw RedisError("redisConnect(\(host):\(port))", detail)
        }
        context = made
    }

    deinit { redisFree(context) }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Runs one command and returns its reply; an error reply throws, naming the command.
    @discardableResult
    func command(_ arguments: [[UInt8]]) throws -> RedisReply {
        let name = String(decoding: arguments.first ?? [], as: UTF8.self)
        let raw: UnsafeMutableRawPointer? = withArgv(arguments) { argc, argv, lengths in
            redisCommandArgv(context, argc, argv, lengths)
        }
        guard let raw else { throw RedisError(name, Self.errorText(context)) }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        let value = RedisReply(reply)
        if case .error(let message) = value { throw RedisError(name, message) }
        return value
    }

    @discardableResult
    func command(_ arguments: String...) throws -> RedisReply {
        try command(arguments.map { Array($0.utf8) })
    }

    /// The next message pushed to a subscribed connection, waiting up to `timeoutMs`; nil when none came.
    func nextPushed(timeoutMs: Int32) throws -> RedisReply? {
        if let ready = try buffered() { return ready }
        var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMs)
        if ready < 0 && errno != EINTR { throw RedisError("poll", String(cString: strerror(errno))) }
        guard ready > 0 else { return nil }
        guard redisBufferRead(context) == REDIS_OK else { throw RedisError("redisBufferRead", Self.errorText(context)) }
        return try buffered()
    }

    /// A reply already read from the socket, if the reader holds a whole one.
    private func buffered() throws -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReplyFromReader(context, &raw) == REDIS_OK else {
            throw RedisError("redisGetReplyFromReader", Self.errorText(context))
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return RedisReply(raw.assumingMemoryBound(to: redisReply.self))
    }

    private func withArgv<T>(_ arguments: [[UInt8]],
                             _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T)
                                 -> T {
        // Each argument's bytes are copied into one buffer the C call reads; lengths make it binary-safe.
        let total = arguments.reduce(0) { $0 + $1.count }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
        defer { buffer.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        var offset = 0
        for argument in arguments {
            argument.withUnsafeBytes { bytes in
                if !bytes.isEmpty { (buffer + offset).withMemoryRebound(to: UInt8.self, capacity: bytes.count) {
                    $0.update(from: bytes.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count)
                } }
            }
            pointers.append(UnsafePointer(buffer + offset))
            lengths.append(argument.count)
            offset += argument.count
        }
        return pointers.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { body(Int32(arguments.count), argv.baseAddress!, $0.baseAddress!) }
        }
    }
}
