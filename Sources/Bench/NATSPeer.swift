import Foundation
import LabKit

/// The push path on NATS JetStream: a stream per account (`acct.<account>`) holds the changes and de-duplicates
/// `Nats-Msg-Id` (the op's key); the sender, once the stream has acked the append, publishes the stream sequence as
/// a hint on each other device's core subject (`hint.<account>.<device>`, at most once); a receiver reads the
/// stream by sequence from its cursor with direct gets, up to the highest sequence it was hinted.
final class NATSPeerDevice: PeerDevice {
    static let account = "bench"
    static var stream: String { "ACCT_\(account)" }
    static var subject: String { "acct.\(account)" }
    static func hintSubject(_ device: Int) -> String { "hint.\(account).d\(device)" }

    private let connection: NATSConnection
    private let index: Int
    private let devices: Int
    private var hint: Int?
    private var hinted: UInt64 = 0

    init(url: String, index: Int, devices: Int) throws {
        connection = try NATSConnection(url: url, name: "bench-d\(index)")
        self.index = index
        self.devices = devices
        if index != 0 { hint = try connection.subscribe(subject: Self.hintSubject(index)) }
    }

    /// Creates the account's stream (once per run, before the devices connect).
    static func setUp(url: String) throws {
        let connection = try NATSConnection(url: url, name: "bench-setup")
        try connection.addStream(name: stream, subject: subject, duplicateWindowSeconds: 120)
    }

    func send(_ change: PeerChange) throws -> String {
        let ack = try connection.publish(subject: Self.subject, data: change.payload, msgID: change.key)
        let reference = Array(String(ack.sequence).utf8)
        if !ack.duplicate {
            for device in 0..<devices where device != index {
                try connection.publishCore(subject: Self.hintSubject(device), data: reference)
            }
        }
        return String(ack.sequence)
    }

    func awaitHints(timeoutMs: Int32) throws -> Bool {
        guard let hint, var message = try connection.next(hint, timeoutMs: Int64(timeoutMs)) else { return false }
        while true {
            if let sequence = UInt64(String(decoding: message.data, as: UTF8.self)) { hinted = max(hinted, sequence) }
            // Only the hints already received: a wait here would delay the pull.
            guard try connection.pending(hint) > 0,
                let more = try connection.next(hint, timeoutMs: 1_000) else { break }
            message = more
        }
        return true
    }

    func pull(after cursor: String?) throws -> (changes: [PeerChange], cursor: String?) {
        var sequence = cursor.flatMap { UInt64($0) } ?? 0
        var changes: [PeerChange] = []
        while sequence < hinted {
            guard let message = try connection.directGet(stream: Self.stream, sequence: sequence + 1) else { break }
            guard let change = PeerChange(payload: message.data) else {
                throw LabError.io("nats: the message at \(Self.stream) seq \(sequence + 1) is not a change")
            }
            changes.append(change)
            sequence += 1
        }
        return (changes, String(sequence))
    }
}
