import CSystem
import Foundation

/// Ties a child process's life to the launcher that started it: when the launcher dies, even by SIGKILL, the kernel
/// sends this process SIGKILL too, so `ps` after any run shows none of ours.
public enum Lifeline {
    /// The launcher sets this variable to its own pid in every child's environment.
    public static let variable = "SYNCLAB_PARENT_PID"

    /// Call first thing in `main`. Does nothing for a process started by hand.
    public static func install() {
        guard let text = ProcessInfo.processInfo.environment[variable], let parent = Int32(text) else { return }
        _ = synclab_set_parent_death_signal(SIGKILL)
        // The launcher may have died before prctl took effect.
        if getppid() != parent { exit(3) }
    }
}
