import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real child process started with posix_spawn, its stdout and stderr appended to a log file. Killed and reaped
/// when released, so no test leaves one behind.
public final class ChildProcess {
    public let pid: pid_t
    public private(set) var exitStatus: Int32?

    public init(_ path: String, _ arguments: [String], log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw TestFailure.setup("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 10)
        }
    }

    public func signal(_ signal: Int32) { if exitStatus == nil { kill(pid, signal) } }

    /// Waits up to `timeout` seconds; the exit code (128 + signal when killed), or nil if it is still running.
    @discardableResult
    public func wait(timeout: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
                exitStatus = signaled ? 128 + (status & 0x7f) : (status >> 8) & 0xff
                return exitStatus
            }
            if rc < 0 && errno != EINTR { return nil }
            if Date() > deadline { return nil }
            usleep(2_000)
        }
    }

    /// SIGKILL and reap.
    public func killNow() {
        signal(SIGKILL)
        wait(timeout: 10)
    }
}
