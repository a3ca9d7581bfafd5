/// Several pooled devices' messages in one frame (docs/PROTOCOL.md §15, "Bundled pulls"): on a pool's connection a
/// pool sends the pulls its devices made in one turn as `["", "SL1 bundle", entries]`, and the server answers them the
/// same way, instead of one `[device, header, body]` message each. Every entry is exactly such a message: its
/// device, its header and its body frame, each as a 4-byte big-endian length and its bytes. What an entry means does
/// not change: each is admitted, decoded, answered and logged as the message it stands for; only libzmq's and
/// CURVE's cost per message is paid once for the lot.
public enum MessageBundle {
    /// The header frame of a bundle (its device frame is empty: the entries name theirs).
    public static let header: [UInt8] = Array("SL\(Limits.version) bundle".utf8)
    /// The one kind of request a pool bundles: a pull (a read; a push keeps its own message, so a crash point after
    /// its reply means the reply left).
    public static let pullHeader: [UInt8] = Array("SL\(Limits.version) pull".utf8)
    /// The one kind of message a broker bundles to a pool (§16): a hint.
    public static let hintHeader: [UInt8] = Array("SL\(Limits.version) hint".utf8)

    /// One message of the bundle.
    public struct Entry: Equatable, Sendable {
        public var device: [UInt8]
        public var header: [UInt8]
        public var body: [UInt8]

        public init(device: [UInt8], header: [UInt8], body: [UInt8]) {
            self.device = device
            self.header = header
            self.body = body
        }

        /// Its bytes in a bundle.
        var encodedCount: Int { 12 + device.count + header.count + body.count }
    }

    /// Why a bundle could not be read; nothing of it is used then.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case empty
        case truncated(entry: Int)
        case tooManyEntries(limit: Int)
        case badDevice(entry: Int)
        case badHeader(entry: Int)
        /// An entry of another type than the bundle may carry (`decode`'s `only`, whose header names the type).
        case notAllowed(entry: Int, only: [UInt8])

        public var description: String {
            switch self {
            case .empty: return "a bundle holds at least one entry"
            case .truncated(let entry): return "entry \(entry) runs past the end of the bundle"
            case .tooManyEntries(let limit): return "more than \(limit) entries (one per device of the pool)"
            case .badDevice(let entry):
                return "entry \(entry): a device frame is 1 to \(Limits.maxIDBytes) bytes"
            case .badHeader(let entry):
                return "entry \(entry): a header frame is 1 to \(Limits.maxHeaderBytes) bytes"
            case .notAllowed(let entry, let only):
                let type = String(decoding: only.drop { $0 != UInt8(ascii: " ") }.dropFirst(), as: UTF8.self)
                return "entry \(entry): a bundle carries \(type)s only"
            }
        }
    }

    /// Whether `frames` (a pooled message without its routing id) is a bundle.
    public static func isBundle(_ frames: [[UInt8]]) -> Bool {
        frames.count == 3 && frames[0].isEmpty && frames[1] == header
    }

    /// The bundles' entry frames for `entries`, in order, each at most `maxBytes` (an entry larger than that alone
    /// fills one by itself: the socket's own limit then refuses it, as it would the message on its own), with how
    /// many entries each holds.
    public static func encode(_ entries: [Entry], maxBytes: Int) -> [(frame: [UInt8], entries: Int)] {
        var frames: [(frame: [UInt8], entries: Int)] = []
        var current: [UInt8] = []
        var count = 0
        for entry in entries {
            if count > 0 && current.count + entry.encodedCount > maxBytes {
                frames.append((current, count))
                current = []
                count = 0
            }
            if count == 0 { current.reserveCapacity(min(maxBytes, entry.encodedCount * entries.count)) }
            for part in [entry.device, entry.header, entry.body] {
                let length = UInt32(truncatingIfNeeded: part.count)
                current.append(contentsOf: [UInt8(length >> 24), UInt8((length >> 16) & 0xFF),
                                            UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)])
                current.append(contentsOf: part)
            }
            count += 1
        }
        if count > 0 { frames.append((current, count)) }
        return frames
    }

    /// The messages that carry `entries`, in order, with how many entries each holds: one entry alone as its own
    /// `[device, header, body]`, more as bundles `["", "SL1 bundle", entries]` of at most `maxBytes` each.
    public static func messages(_ entries: [Entry], maxBytes: Int) -> [(frames: [[UInt8]], entries: Int)] {
        if entries.count == 1, let only = entries.first { return [([only.device, only.header, only.body], 1)] }
        return encode(entries, maxBytes: maxBytes).map { ([[], header, $0.frame], $0.entries) }
    }

    /// The entries of one bundle's entry frame, at most `maxEntries`; throws without reading further on the first
    /// entry that is cut short or whose device or header frame is out of bounds, and, with `only`, when a read entry's
    /// header is another (a server takes bundles of pulls alone).
    public static func decode(_ frame: [UInt8], maxEntries: Int, only: [UInt8]? = nil) throws(Failure) -> [Entry] {
        var entries: [Entry] = []
        var at = 0
        func part(_ entry: Int) throws(Failure) -> [UInt8] {
            guard frame.count - at >= 4 else { throw .truncated(entry: entry) }
            let count = Int(frame[at]) << 24 | Int(frame[at + 1]) << 16 | Int(frame[at + 2]) << 8 | Int(frame[at + 3])
            at += 4
            guard frame.count - at >= count else { throw .truncated(entry: entry) }
            defer { at += count }
            return Array(frame[at..<(at + count)])
        }
        while at < frame.count {
            let index = entries.count
            guard index < maxEntries else { throw .tooManyEntries(limit: maxEntries) }
            let device = try part(index)
            guard !device.isEmpty && device.count <= Limits.maxIDBytes else { throw .badDevice(entry: index) }
            let header = try part(index)
            guard !header.isEmpty && header.count <= Limits.maxHeaderBytes else { throw .badHeader(entry: index) }
            entries.append(Entry(device: device, header: header, body: try part(index)))
        }
        guard !entries.isEmpty else { throw .empty }
        if let only, let other = entries.firstIndex(where: { $0.header != only }) {
            throw .notAllowed(entry: other, only: only)
        }
        return entries
    }
}
