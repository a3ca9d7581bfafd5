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

    /// Starts `argv` (its first element the program: a path, or with `searchPath` a name looked up in `PATH`) with
    /// `actions`, in this process's environment with our pid in `variable`, so that the child's `install()` ties its
    /// life to ours. Returns the child's pid and posix_spawn's result (0, or the error number).
    public static func spawn(_ argv: [String], actions: inout posix_spawn_file_actions_t,
                             searchPath: Bool = false) -> (pid: pid_t, rc: Int32) {
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = String(getpid())
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArgv.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = searchPath ? posix_spawnp(&pid, argv[0], &actions, nil, cArgv, cEnv)
            : posix_spawn(&pid, argv[0], &actions, nil, cArgv, cEnv)
        return (pid, rc)
    }
}
