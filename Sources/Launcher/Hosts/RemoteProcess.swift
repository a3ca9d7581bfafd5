import Foundation
import LabKit

/// A role started on a host over ssh (docs/HOSTS.md). The launcher's child is an ssh client whose remote command
/// starts the role in the host's run folder, records its pid, and waits for it: the client exits with the role's
/// status (255: ssh itself failed). Its standard input is a pipe the launcher holds: when the launcher dies, or the
/// connection does, the host sees the end of it and kills the role (the remote lifeline). Signals go by ssh too.
final class RemoteProcess: LabProcess {
    let name: String
    let ssh: SSH
    /// The role's executable and arguments, as paths on the host.
    let executable: String, arguments: [String]
    /// The host's run folder, and where ssh's own messages go locally.
    let remoteRoot: String, sshLogPath: String
    private(set) var pid: pid_t = 0
    private(set) var running = false
    private(set) var paused = false
    private(set) var exitStatus: Int32?
    /// True once the launcher asked the role to end (kill, stop): an exit after it is not an ssh failure.
    private var ending = false
    private var lifeline: Int32 = -1

    init(name: String, ssh: SSH, executable: String, arguments: [String], remoteRoot: String, sshLogPath: String) {
        self.name = name
        self.ssh = ssh
        self.executable = executable
        self.arguments = arguments
        self.remoteRoot = remoteRoot
        self.sshLogPath = sshLogPath
    }

    var pidFile: String { "\(remoteRoot)/pids/\(name).pid" }

    /// The one shell line the host runs: start, record the pid, watch the lifeline, wait.
    var remoteCommand: String {
        let argv = ([executable] + arguments).map(shellQuote).joined(separator: " ")
        let log = shellQuote("\(remoteRoot)/logs/\(name).log")
        return "cd \(shellQuote(remoteRoot)) || exit 127; exec 3<&0; "
            + "\(argv) >>\(log) 2>&1 </dev/null 3<&- & pid=$!; echo $pid >\(shellQuote(pidFile)); "
            + "( cat <&3 >/dev/null; kill -9 $pid ) >/dev/null 2>&1 & w=$!; "
            + "wait $pid; rc=$?; kill $w 2>/dev/null; exit $rc"
    }

    func start() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw LabError.io("cannot make a pipe for \(name)") }
        // Only this ssh client may hold the lifeline: no other child of the launcher inherits either end.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, sshLogPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ssh.argv(remoteCommand, stdinNull: false).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var newPID: pid_t = 0
        let rc = posix_spawn(&newPID, "/usr/bin/ssh", &actions, nil, argv, environ)
        close(fds[0])
        guard rc == 0 else {
            close(fds[1])
            throw LabError.io("cannot start ssh for \(name): \(String(cString: strerror(rc)))")
        }
        lifeline = fds[1]
        pid = newPID
        running = true
        paused = false
        ending = false
        exitStatus = nil
    }

    /// A signal to the role on its host (`kill -STOP` etc. of the pid it recorded).
    func signal(_ sig: Int32) {
        guard running else { return }
        if sig == SIGKILL || sig == SIGTERM { ending = true }
        ssh.run("kill -\(sig) $(cat \(shellQuote(pidFile)))", timeout: 10)
        if sig == SIGSTOP { paused = true }
        if sig == SIGCONT { paused = false }
    }

    @discardableResult
    func poll() -> Bool {
        guard running else { return true }
        guard let status = reapIfExited(pid) else { return false }
        running = false
        paused = false
        exitStatus = status
        if lifeline >= 0 { close(lifeline) }
        lifeline = -1
        return true
    }

    func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if poll() { return true }
            usleep(5_000)
        }
        return poll()
    }

    /// SIGKILL on the host, then the ssh client ends with it; if the host does not answer, the client is killed
    /// and its closed lifeline ends the role when the connection still stands.
    func killNow() {
        guard running else { return }
        ending = true
        signal(SIGKILL)
        if !wait(timeout: 5) {
            kill(pid, SIGKILL)
            _ = wait(timeout: 2)
        }
    }

    /// The ssh client failed (exit 255) without the launcher asking the role to end: the host or the connection
    /// went away mid-run.
    var sshFailed: Bool {
        guard !running, !ending, let status = exitStatus, status & 0x7f == 0 else { return false }
        return (status >> 8) & 0xff == 255
    }

    /// Marks a stop the launcher asked for (over control), so its exit is not taken for an ssh failure.
    func expectEnd() { ending = true }

    // Memory and CPU are read from /proc of the launcher's machine, which a host's processes are not on.
    var residentMB: Double? { nil }
    var privateMB: Double? { nil }
    var peakMB: Double? { nil }
    var cpuSeconds: Double? { nil }
}
