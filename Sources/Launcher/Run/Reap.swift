import Foundation

/// Reaps child `pid` without blocking: its wait status once it has exited (0 when someone else already reaped it),
/// nil while it runs. RoleProcess and RemoteProcess (an ssh client) both watch their child with it.
func reapIfExited(_ pid: pid_t) -> Int32? {
    var status: Int32 = 0
    let rc = waitpid(pid, &status, WNOHANG)
    return rc == pid || (rc < 0 && errno == ECHILD) ? status : nil
}
