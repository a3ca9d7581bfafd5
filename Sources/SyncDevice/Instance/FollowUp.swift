/// The pass that follows the running one.
public struct FollowUp: Sendable, Equatable {
    public var trigger: Trigger
    /// `sync` requests to answer when it ends.
    public var tokens: [Int]
    /// A manual request joined it: it runs whatever the platform says.
    public var forced: Bool
    public var ignoreBackoff: Bool
}
