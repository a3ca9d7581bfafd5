import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real child process started with posix_spawn, its stdout and stderr appended to files (never a pipe: a pipe that
/// fills while the test waits for the child blocks the child, and the wait never ends). It starts with no signal
/// blocked or ignored and none of the test's file descriptors, and it is killed and reaped when released, so no test
/// leaves one behind.
public final class ChildProcess {
    /// How a child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// The shell's convention: the exit code, or 128 + the signal that killed it.
        public var status: Int32 {
            switch self {
            case .exited(let code): return code
            case .signaled(let signal): return 128 + signal
            }
        }

        public var description: String {
            switch self {
            case .exited(let code): return "exited \(code)"
            case .signaled(let signal): return "killed by signal \(signal)"
            }
        }
    }

    public let pid: pid_t
    public let path: String
    public let arguments: [String]
    /// The files its stdout and stderr are appended to (nil: /dev/null); the same file when started with `log:`.
    public let stdout: String?
    public let stderr: String?
    public private(set) var termination: Termination?

    /// The exit code (128 + signal when killed), once it has been seen to exit.
    public var exitStatus: Int32? { termination?.status }

    /// Starts `path` with stdout and stderr both appended to `log`.
    public convenience init(_ path: String, _ arguments: [String], log: String) throws {
        try self.init(path, arguments, stdout: log, stderr: log)
    }

    /// Starts `path` with stdout and stderr appended to files of their own (nil: /dev/null).
    public init(_ path: String, _ arguments: [String], stdout: String?, stderr: String?) throws {
        self.path = path
        self.arguments = arguments
        self.stdout = stdout
        self.stderr = stderr
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let append = O_WRONLY | O_CREAT | O_APPEND
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", append, 0o644)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr ?? "/dev/null", append, 0o644)
        }
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var every = sigset_t()
        sigfillset(&every)
        sigdelset(&every, SIGKILL)
        sigdelset(&every, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &every)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw TestFailure.setup("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    deinit {
        if termination == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 10)
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which its headers declare only for
    /// `_GNU_SOURCE`; nil where there is none.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// What it wrote to its stdout file so far (with stderr when both go to one log).
    public var log: String { stdout.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }

    /// What it wrote to its stderr file so far.
    public var errors: String { stderr.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }

    public var isRunning: Bool { wait(timeout: 0) == nil }

    public func signal(_ signal: Int32) { if termination == nil { kill(pid, signal) } }

    /// Waits up to `timeout` seconds; the exit code (128 + signal when killed), or nil if it is still running.
    @discardableResult
    public func wait(timeout: Double) -> Int32? {
        if let termination { return termination.status }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
                termination = signaled ? .signaled(status & 0x7f) : .exited((status >> 8) & 0xff)
                return termination?.status
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

    /// Waits up to `limit` seconds for it to exit by itself; if it has not, sends `stop` and, unless that was SIGKILL,
    /// gives it `grace` seconds before SIGKILL. How it ended (it is always reaped).
    @discardableResult
    public func finish(within limit: Double, stop: Int32 = SIGKILL, grace: Double = 2) -> Termination {
        if wait(timeout: limit) == nil {
            signal(stop)
            if stop == SIGKILL || wait(timeout: grace) == nil { killNow() }
        }
        return termination ?? .signaled(SIGKILL)
    }

    /// Runs `path` to its end, stdout and stderr in one file, bounded: stopped as `finish` does after `limit` seconds.
    /// Its status (128 + signal when killed) and all it wrote.
    public static func run(_ path: String, _ arguments: [String], limit: Double = 60, stop: Int32 = SIGKILL)
        throws -> (status: Int32, output: String)
    {
        let folder = TempFolder()
        let child = try ChildProcess(path, arguments, log: folder.file("output.txt"))
        let end = child.finish(within: limit, stop: stop)
        return (end.status, child.log)
    }
}
