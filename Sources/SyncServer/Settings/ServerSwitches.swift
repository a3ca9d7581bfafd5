import SyncProtocol

/// The server's design switches (issue 13, docs/TOPOLOGY.md "Design switches"): each defaults to the lab's correct
/// design and turns one seed rule off, so a lesson can run the broken server and watch which invariant fails.
public struct ServerSwitches: Sendable, Equatable {
    /// A known idempotency key returns its first result and changes nothing. Off: a resend is applied again
    /// ("Idempotency
    /// keys created with the operation, and reused on every replay, make the second send harmless", seed 001).
    public var idempotency: Bool
    /// The head-moved notice leaves only after the push's commit. On: it is sent before, so a broker can hint a change
    /// that a failed (or killed) commit never made (seed 001: "cursor moved after the commit"; DESIGN.md).
    public var noticeBeforeCommit: Bool
    /// The push's reply leaves only after the commit. On: it is sent before, so a commit that fails after it has
    /// acknowledged an op the server does not have: an acknowledged edit lost.
    public var replyBeforeCommit: Bool
    /// The accounts the switches apply to; nil: all. So one server can run the broken design for one account and the
    /// lab's for another, side by side in one lesson.
    public var accounts: Set<String>?

    public init(idempotency: Bool = true, noticeBeforeCommit: Bool = false, replyBeforeCommit: Bool = false,
                accounts: Set<String>? = nil) {
        self.idempotency = idempotency
        self.noticeBeforeCommit = noticeBeforeCommit
        self.replyBeforeCommit = replyBeforeCommit
        self.accounts = accounts
    }

    /// The switches in force for `account`: these, or the lab's design when the account is not one they name.
    public func effective(for account: String) -> ServerSwitches {
        guard let accounts, !accounts.contains(account) else { return self }
        return .correct
    }

    /// The lab's design.
    public static let correct = ServerSwitches()

    /// Whether anything leaves before the commit.
    public var sendsBeforeCommit: Bool { noticeBeforeCommit || replyBeforeCommit }

    /// The switches as event fields (`process.started`).
    public var fields: [(String, JSONValue)] {
        [("idempotency", .bool(idempotency)), ("noticeBeforeCommit", .bool(noticeBeforeCommit)),
         ("replyBeforeCommit", .bool(replyBeforeCommit)),
         ("switchAccounts", accounts.map { .array($0.sorted().map { .string($0) }) } ?? "all")]
    }
}
