/// How one op's attempt ended (seed 001's four results).
public struct OpOutcome: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The server applied it now or before (`seq` of its change).
        case acknowledged(seq: Int?)
        /// No answer (timeout, cut-off, lost connection): `confirmationDelayed`, resent at `retryAt` with its key.
        case unknown(retryAt: Double, reason: String)
        /// Transient: `waitingToSend` until `at`.
        case retry(at: Double, reason: String)
        /// Permanent: `needsAttention`.
        case needsAttention(reason: String)
    }

    public var key: String
    public var kind: Kind

    public init(key: String, kind: Kind) {
        self.key = key
        self.kind = kind
    }

    /// The `outcome` field of `op.result`.
    public var name: String {
        switch kind {
        case .acknowledged: return "acknowledged"
        case .unknown: return "unknown"
        case .retry: return "retry"
        case .needsAttention: return "needsAttention"
        }
    }
}
