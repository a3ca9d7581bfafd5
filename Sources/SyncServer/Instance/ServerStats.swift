import SyncProtocol

/// What the server has done since it started, answered to the control command `stats`.
public struct ServerStats: Sendable, Equatable {
    public var applied = 0
    public var duplicates = 0
    public var rejected = 0
    public var retryLater = 0
    public var conflicts = 0
    public var pulls = 0
    public var notices = 0
    public var noticesDropped = 0
    public var refused = 0
    public var faultsInjected = 0
    /// Each account's head seq (from the database at start, then kept up to date).
    public var heads: [String: Int] = [:]
    /// Open sessions now (set by the instance before it answers `stats`): it shrinks as connections end.
    public var sessions = 0

    public init(heads: [String: Int] = [:]) { self.heads = heads }

    /// The control reply's data.
    public var json: JSONValue {
        .object([
            ("applied", .int(applied)), ("duplicates", .int(duplicates)), ("rejected", .int(rejected)),
            ("retryLater", .int(retryLater)), ("conflicts", .int(conflicts)), ("pulls", .int(pulls)),
            ("notices", .int(notices)), ("noticesDropped", .int(noticesDropped)), ("refused", .int(refused)),
            ("faultsInjected", .int(faultsInjected)), ("sessions", .int(sessions)),
            ("heads", .object(heads.keys.sorted().map { ($0, .int(heads[$0] ?? 0)) })),
        ])
    }
}
