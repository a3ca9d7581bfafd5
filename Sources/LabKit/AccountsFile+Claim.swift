import SyncProtocol

extension AccountsFile {
    /// What a device's claim (`hello` at the server, `register` at the broker) contradicts in the accounts file. Both
    /// roles ask this one function, in this order, so a claim one of them refuses the other refuses too (the server
    /// once welcomed a device whose platform the broker refused).
    public enum Contradiction: Sendable, Equatable {
        case token
        case account(actual: String)
        case platform(actual: Platform)

        /// The error code both roles answer with.
        public var code: ErrorCode {
            switch self {
            case .token: return .badToken
            case .account: return .wrongAccount
            case .platform: return .invalid
            }
        }
    }

    /// nil when the claim matches the device's record: its token (already compared, in constant time where the
    /// record holds a hash), then its account, then its platform.
    public static func contradiction(tokenMatches: Bool, claimedAccount: String, claimedPlatform: Platform,
                                     account: String, platform: Platform) -> Contradiction? {
        if !tokenMatches { return .token }
        if claimedAccount != account { return .account(actual: account) }
        if claimedPlatform != platform { return .platform(actual: platform) }
        return nil
    }
}
