/// Why a pass ran (DESIGN.md's vocabulary). Every trigger runs the same pass; the scheduler only decides how early.
public enum Trigger: String, Sendable, CaseIterable, Codable {
    /// A hint from the broker.
    case push
    /// The app was launched or brought to the foreground.
    case foreground
    /// The user edited a draft while the app was in the foreground.
    case localEdit = "local-edit"
    /// The network came back.
    case connectivity
    /// Android WorkManager periodic work.
    case periodic
    /// An iOS BGAppRefreshTask window.
    case opportunistic
    /// The web page's interval timer, while the tab is open.
    case interval
    /// The web page became visible again (`visibilitychange`).
    case visibility
    /// The user (or the launcher) asked for a sync.
    case manual

    /// Runs a platform scheduler starts on its own: what a guarantee measures.
    public static let scheduled: Set<Trigger> = [.periodic, .opportunistic, .interval]
}
