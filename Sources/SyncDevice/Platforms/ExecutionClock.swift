/// How a pass's execution time is measured against platform limits.
public enum ExecutionClock: String, Sendable, CaseIterable {
    /// The pass's work is the lab's machinery (sockets, SQLite), which runs in real time (DESIGN.md): a 30 s
    /// window is 30 s of it, whatever the time scale.
    case real
    /// Simulated seconds: at a large time scale a few real milliseconds fill a 30 s window.
    case simulated
}
