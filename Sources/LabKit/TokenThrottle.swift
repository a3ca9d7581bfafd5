/// Wrong tokens allowed per connection and per key (docs/SECURITY.md, "Bounded cost per peer"): each has a bucket
/// of `burst` attempts, refilled at one per `refillNanos`; a failed `hello` or `register` takes one from each of its
/// buckets, and while any of them is empty the next attempt is refused without its token being looked at
/// (`auth.throttled`). Right tokens take nothing. Pure: the caller hands in the time (real nanoseconds, never
/// simulated time: a time scale must not change the rate).
public struct TokenThrottle: Sendable {
    public static let burst = 5.0
    /// One more wrong token a second, sustained.
    public static let refillNanos: UInt64 = 1_000_000_000
    /// Buckets kept at most; full ones are forgotten first (they hold nothing a full new bucket would not).
    static let maxBuckets = 10_000

    private var buckets: [String: (left: Double, at: UInt64)] = [:]
    /// Buckets whose running dry was announced; a bucket leaves when a wrong token is counted in it again.
    private var announced: Set<String> = []

    public init() {}

    /// The bucket names of one attempt: its connection, and its key's user id when it has one (CURVE).
    public static func names(connection: String, user: String?) -> [String] {
        ["connection:" + connection] + (user.map { ["key:" + $0] } ?? [])
    }

    private func left(_ name: String, now: UInt64) -> Double {
        guard let bucket = buckets[name] else { return Self.burst }
        let refilled = Double(now &- bucket.at) / Double(Self.refillNanos)
        return min(Self.burst, bucket.left + max(0, refilled))
    }

    /// What to do with an attempt.
    public enum Verdict: Sendable, Equatable {
        case check
        /// Refused unchecked; `announce`: the first refusal since a bucket ran dry (one `auth.throttled` line per
        /// episode, so a flood of attempts writes a bounded log).
        case refuse(announce: Bool)
    }

    /// Whether an attempt on `names` may have its token checked now.
    public mutating func verdict(_ names: [String], now: UInt64) -> Verdict {
        let dry = names.filter { left($0, now: now) < 1 }
        guard !dry.isEmpty else { return .check }
        let announce = dry.contains { !announced.contains($0) }
        announced.formUnion(dry)
        return .refuse(announce: announce)
    }

    /// An attempt on `names` presented a wrong token.
    public mutating func failed(_ names: [String], now: UInt64) {
        for name in names {
            buckets[name] = (max(0, left(name, now: now) - 1), now)
            announced.remove(name)
        }
        if buckets.count > Self.maxBuckets {
            buckets = buckets.filter { left($0.key, now: now) < Self.burst }
            announced = announced.filter { buckets[$0] != nil }
        }
    }
}
