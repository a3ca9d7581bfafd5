import Foundation
import LabKit

/// The push path on Redis: one Lua script, run atomically by the server, is the push: it returns the stream id an
/// op's key already has (idempotency: the key's record `idem:<account>:<key>`), or appends the change to the
/// account's stream (`stream:<account>`, XADD), records the key, and PUBLISHes the new id as a hint on each other
/// device's channel (`hint:<account>:<device>`, at most once). A receiver reads the stream after its cursor (XRANGE
/// from the last id it applied, exclusive).
final class RedisPeerDevice: PeerDevice {
    static let account = "bench"
    static var stream: String { "stream:\(account)" }
    static var members: String { "devices:\(account)" }
    static func hintChannel(_ device: Int) -> String { "hint:\(account):d\(device)" }
    /// Idempotency records are kept for a day, as the lab's server keeps its own for the run.
    static let script = """
        local prior = redis.call('GET', KEYS[2])
        if prior then return prior end
        local id = redis.call('XADD', KEYS[1], '*', 'p', ARGV[1])
        redis.call('SET', KEYS[2], id, 'EX', 86400)
        for _, device in ipairs(redis.call('SMEMBERS', KEYS[3])) do
            if device ~= ARGV[2] then redis.call('PUBLISH', ARGV[3] .. device, id) end
        end
        return id
        """

    private let commands: RedisConnection
    private let hints: RedisConnection?
    private let index: Int
    private let sha: String
    private static let pageSize = "1000"

    init(port: Int, index: Int, sha: String) throws {
        commands = try RedisConnection(host: "127.0.0.1", port: port)
        self.index = index
        self.sha = sha
        if index != 0 {
            let subscriber = try RedisConnection(host: "127.0.0.1", port: port)
            // SUBSCRIBE's reply is its confirmation: the server has the subscription when it returns.
            let confirmation = try subscriber.command("SUBSCRIBE", Self.hintChannel(index))
            guard confirmation.items?.first?.text == "subscribe" else {
                throw RedisError("SUBSCRIBE \(Self.hintChannel(index))", "unexpected reply \(confirmation)")
            }
            hints = subscriber
        } else {
            hints = nil
        }
    }

    /// Registers the account's devices and loads the push script; returns its SHA for EVALSHA.
    static func setUp(port: Int, devices: Int) throws -> String {
        let connection = try RedisConnection(host: "127.0.0.1", port: port)
        try connection.command("DEL", stream, members)
        try connection.command(["SADD", members].map { Array($0.utf8) } + (0..<devices).map { Array("d\($0)".utf8) })
        guard let sha = try connection.command("SCRIPT", "LOAD", script).text else {
            throw RedisError("SCRIPT LOAD", "no SHA in the reply")
        }
        return sha
    }

    func send(_ change: PeerChange) throws -> String {
        let reply = try commands.command([
            Array("EVALSHA".utf8), Array(sha.utf8), Array("3".utf8), Array(Self.stream.utf8),
            Array("idem:\(Self.account):\(change.key)".utf8), Array(Self.members.utf8),
            change.payload, Array("d\(index)".utf8), Array("hint:\(Self.account):".utf8),
        ])
        guard let id = reply.text else { throw RedisError("EVALSHA push \(change.key)", "no stream id in \(reply)") }
        return id
    }

    func awaitHints(timeoutMs: Int32) throws -> Bool {
        guard let hints, try hints.nextPushed(timeoutMs: timeoutMs) != nil else { return false }
        // Take the hints already here; the pull reads to the stream's end whatever they said.
        while try hints.nextPushed(timeoutMs: 0) != nil {}
        return true
    }

    func pull(after cursor: String?) throws -> (changes: [PeerChange], cursor: String?) {
        let start = cursor.map { "(" + $0 } ?? "-"
        let reply = try commands.command("XRANGE", Self.stream, start, "+", "COUNT", Self.pageSize)
        guard let entries = reply.items else { throw RedisError("XRANGE \(Self.stream)", "not an array: \(reply)") }
        var changes: [PeerChange] = []
        var last = cursor
        for entry in entries {
            guard let pair = entry.items, pair.count == 2, let id = pair[0].text, let fields = pair[1].items,
                  fields.count == 2, let payload = fields[1].bytes, let change = PeerChange(payload: payload)
            else { throw RedisError("XRANGE \(Self.stream)", "an entry that is not a change: \(entry)") }
            changes.append(change)
            last = id
        }
        return (changes, last)
    }
}
