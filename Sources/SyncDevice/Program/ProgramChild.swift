import Foundation
import LabKit
import SyncProtocol

/// An outside program as a child process: its standard input and output are pipes of ours (one JSON object a line),
/// its standard error goes to our log. `SYNCLAB_PARENT_PID` in its environment is our pid, so it can ask the kernel
/// to kill it when we die (`prctl(PR_SET_PDEATHSIG)`), as every lab process does with the launcher.
final class ProgramChild {
    let pid: pid_t
    /// Our end of its standard output (non-blocking).
    let output: Int32
    /// Our end of its standard input (non-blocking: a program that stops reading fails, it does not hang us).
    private let input: Int32
    private var buffer: [UInt8] = []
    private var linesRead = 0
    private var status: Int32?
    /// Set by `stop`: its pipes are closed and it is reaped (a second `stop` must not close reused descriptors).
    private var stopped: Exit?

    /// What went wrong with the program, in words for `program.failed`.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// How it ended.
    struct Exit {
        let status: Int32
        var text: String {
            if status & 0x7f == 0 { return "the program exited with status \((status >> 8) & 0xff)" }
            return "the program was killed by signal \(status & 0x7f)"
        }
    }

    init(argv: [String], pidFile: String) throws {
        guard let first = argv.first, !first.isEmpty else { throw Failure(description: "no program to start") }
        Self.endOrphan(pidFile: pidFile, argv: argv)
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw Failure(description: "cannot make pipes: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let (newPID, rc) = Lifeline.spawn(argv, actions: &actions, searchPath: true)
        close(toChild[0])
        close(fromChild[1])
        guard rc == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw Failure(description: "cannot start \(first): \(String(cString: strerror(rc)))")
        }
        pid = newPID
        input = toChild[1]
        output = fromChild[0]
        for fd in [input, output] {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        try? "\(pid)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
    }

    /// A lab side killed by SIGKILL cannot stop its program; a program that ignored the parent-death signal would
    /// still run with the old database open. The next life ends it first, if that pid is still the same command line.
    static func endOrphan(pidFile: String, argv: [String]) {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let old = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), old > 1,
              let cmdline = FileManager.default.contents(atPath: "/proc/\(old)/cmdline")
        else { return }
        let words = cmdline.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
        if words == argv { kill(old, SIGKILL) }
    }

    /// Waits for the program's first line, which must be `{"type":"ready", …}`.
    func readReady(within ms: Int) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(Double(ms) / 1000)
        while Date() < deadline {
            if let exit = exited() { throw Failure(description: "\(exit.text) before it said ready") }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 20)
            let lines = try readLines()
            guard let (number, line) = lines.first else { continue }
            guard let value = try? JSONValue.parse(line), value["type"]?.stringValue == "ready" else {
                throw Failure(description: "line \(number) of its output must be {\"type\":\"ready\", …}, got "
                    + Self.quote(line))
            }
            buffer = Array((lines.dropFirst().map { $0.1 + "\n" }.joined()).utf8) + buffer
            linesRead = number
            return value
        }
        throw Failure(description: "it did not say ready within \(ms) ms")
    }

    /// The complete lines waiting on its output, numbered from 1 over its life.
    func readLines() throws -> [(Int, String)] {
        guard stopped == nil else { return [] }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(output, &chunk, chunk.count)
            if n > 0 {
                buffer += chunk[0..<n]
                guard buffer.count <= 1 << 20 else {
                    throw Failure(description: "a line of its output is over 1 MiB")
                }
                continue
            }
            if n == 0 || errno == EAGAIN || errno == EWOULDBLOCK { break }
            if errno != EINTR { break }
        }
        var lines: [(Int, String)] = []
        while let newline = buffer.firstIndex(of: 0x0A) {
            let bytes = buffer[..<newline]
            buffer.removeSubrange(...newline)
            guard !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) else { continue }
            linesRead += 1
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw Failure(description: "line \(linesRead) of its output is not UTF-8")
            }
            lines.append((linesRead, text))
        }
        return lines
    }

    /// One line to its standard input.
    func write(_ line: String) throws {
        // Its descriptors are closed once stopped, and their numbers may belong to a new program's pipes by now.
        guard stopped == nil else { throw Failure(description: "it was written to after it was stopped") }
        var bytes = Array((line + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeMutableBytes {
                Foundation.write(input, $0.baseAddress! + written, $0.count - written)
            }
            if n > 0 {
                written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw Failure(description: "it does not read its input (the pipe is full)")
            } else {
                throw Failure(description: "its input is closed (\(String(cString: strerror(errno))))")
            }
        }
        bytes.removeAll()
    }

    /// Its exit, once it has exited (reaped here).
    func exited() -> Exit? {
        if let status { return Exit(status: status) }
        var raw: Int32 = 0
        let rc = waitpid(pid, &raw, WNOHANG)
        guard rc == pid else { return nil }
        status = raw
        return Exit(status: raw)
    }

    /// Waits up to `graceMs` for it to exit on its own (after `stop`), then kills it; reaps it.
    func stop(graceMs: Int) -> Exit {
        if let stopped { return stopped }
        close(input)
        let deadline = Date().addingTimeInterval(Double(graceMs) / 1000)
        var exit = exited()
        while exit == nil && Date() < deadline {
            usleep(5_000)
            exit = exited()
        }
        let ended: Exit
        if let exit {
            ended = exit
        } else {
            // Not reaped yet, so the pid is still ours to kill.
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = waitpid(pid, &raw, 0)
            status = raw
            ended = Exit(status: raw)
        }
        close(output)
        stopped = ended
        return ended
    }

    /// At most 80 bytes of a line, quoted, for a failure's words.
    static func quote(_ line: String) -> String {
        let bytes = Array(line.utf8)
        let cut = bytes.count > 80 ? String(decoding: bytes.prefix(80), as: UTF8.self) + "…" : line
        return JSONValue.string(cut).description
    }
}
