import SyncProtocol

/// The broker's accounting of hints. At any moment
/// `accepted == delivered + dropped + coalesced + throttled + discarded + expired + held`;
/// `duplicated` (extra copies sent) is counted beside.
public struct HintCounters: Sendable, Equatable {
    public var accepted = 0
    public var delivered = 0
    public var dropped = 0
    public var duplicated = 0
    public var coalesced = 0
    public var throttled = 0
    public var discarded = 0
    public var expired = 0
    /// Hints not settled yet: held by a profile, delayed or held back by chaos, or being sent.
    public var held = 0

    public init() {}

    /// Every accepted hint is settled or held.
    public var balances: Bool {
        accepted == delivered + dropped + coalesced + throttled + discarded + expired + held
    }

    public static func + (lhs: HintCounters, rhs: HintCounters) -> HintCounters {
        var sum = lhs
        sum.accepted += rhs.accepted
        sum.delivered += rhs.delivered
        sum.dropped += rhs.dropped
        sum.duplicated += rhs.duplicated
        sum.coalesced += rhs.coalesced
        sum.throttled += rhs.throttled
        sum.discarded += rhs.discarded
        sum.expired += rhs.expired
        sum.held += rhs.held
        return sum
    }

    /// The counters in the order of report.json's `hints` object.
    public var fields: [(String, JSONValue)] {
        [
            ("accepted", .int(accepted)), ("delivered", .int(delivered)), ("dropped", .int(dropped)),
            ("duplicated", .int(duplicated)), ("coalesced", .int(coalesced)), ("throttled", .int(throttled)),
            ("discarded", .int(discarded)), ("expired", .int(expired)), ("held", .int(held)),
        ]
    }

    /// Reads counters back from control data (the launcher and tests use this).
    public init?(_ value: JSONValue) {
        guard let accepted = value["accepted"]?.intValue, let delivered = value["delivered"]?.intValue,
            let dropped = value["dropped"]?.intValue, let duplicated = value["duplicated"]?.intValue,
            let coalesced = value["coalesced"]?.intValue, let throttled = value["throttled"]?.intValue,
            let discarded = value["discarded"]?.intValue, let expired = value["expired"]?.intValue,
            let held = value["held"]?.intValue
        else { return nil }
        self.accepted = accepted
        self.delivered = delivered
        self.dropped = dropped
        self.duplicated = duplicated
        self.coalesced = coalesced
        self.throttled = throttled
        self.discarded = discarded
        self.expired = expired
        self.held = held
    }
}
