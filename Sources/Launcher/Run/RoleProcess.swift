import Foundation
import LabKit

/// One process the launcher started: an executable, its arguments and its log file. It can be killed, paused,
/// resumed and started again with the same arguments (a restart after kill -9 resumes from its database).
package final class RoleProcess {
    package let name: String
    let executable: String
    let arguments: [String]
    package let logPath: String
    package private(set) var pid: pid_t = 0
    package private(set) var running = false
    private(set) var paused = false
    private(set) var exitStatus: Int32?

    package init(name: String, executable: String, arguments: [String], logPath: String) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.logPath = logPath
    }

    /// Starts the process with stdout and stderr appended to its log and the launcher as its lifeline.
    package func start() throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw LabError.config("cannot run \(executable): not found or not executable (build with scripts/lab)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let (newPID, rc) = Lifeline.spawn([executable] + arguments, actions: &actions)
        guard rc == 0 else {
            throw LabError.io("cannot start \(name) (\(executable)): \(String(cString: strerror(rc)))")
        }
        pid = newPID
        running = true
        paused = false
        exitStatus = nil
    }

    package func signal(_ sig: Int32) {
        guard running else { return }
        kill(pid, sig)
        if sig == SIGSTOP { paused = true }
        if sig == SIGCONT { paused = false }
    }

    /// Reaps the process if it has exited; true when it is no longer running.
    @discardableResult
    package func poll() -> Bool {
        guard running else { return true }
        guard let status = reapIfExited(pid) else { return false }
        running = false
        paused = false
        exitStatus = status
        return true
    }

    /// Waits up to `timeout` real seconds for the process to exit.
    package func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if poll() { return true }
            usleep(5_000)
        }
        return poll()
    }

    /// SIGKILL and reap.
    package func killNow() {
        guard running else { return }
        // SIGKILL ends a stopped process too. A SIGCONT first would let a paused process run for a moment and
        // carry out what it had not read yet (the crash topology's "killed with pushes unread" then sometimes had
        // the server apply them just before it died).
        kill(pid, SIGKILL)
        paused = false
        _ = wait(timeout: 5)
    }

    /// A description of how it ended, for the log.
    package var exitDescription: String {
        guard let status = exitStatus else { return running ? "running" : "not started" }
        let signal = status & 0x7f
        if signal != 0 { return "killed by signal \(signal)" }
        return "exit \((status >> 8) & 0xff)"
    }

    /// Resident memory in MB from /proc, nil if unknown. It counts the pages of shared libraries (the Swift runtime,
    /// Foundation) that every process of the run shares.
    package var residentMB: Double? { statusMB("VmRSS:") }

    /// Memory this process alone holds (anonymous pages: heap, stacks), in MB.
    package var privateMB: Double? { statusMB("RssAnon:") }

    /// The most it was ever resident (VmHWM), in MB: a pool's peak, not only its size when the run ended.
    package var peakMB: Double? { statusMB("VmHWM:") }

    private func statusMB(_ field: String) -> Double? {
        guard running, let text = try? String(contentsOfFile: "/proc/\(pid)/status",
            encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            let kb = line.split(separator: " ").compactMap { Double($0) }.first
            return kb.map { $0 / 1024 }
        }
        return nil
    }
}
