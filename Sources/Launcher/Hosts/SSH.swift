import Foundation
import LabKit

/// The system's OpenSSH clients for one host (docs/HOSTS.md): every login in batch mode (no password prompt), with
/// the host's identity only, its host key checked strictly, and keep-alives so a host that goes away is noticed.
/// Nothing secret is ever on a command line: keys and tokens travel as files (`ship`).
struct SSH: Sendable {
    let host: HostSpec

    var destination: String { "\(host.user)@\(host.address)" }

    /// `ssh`'s options for this host (scp spells the port `-P`).
    func options(port portFlag: String = "-p") -> [String] {
        var options = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "StrictHostKeyChecking=yes",
                       "-o", "IdentitiesOnly=yes", "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3",
                       "-o", "LogLevel=ERROR", "-o", "ControlMaster=no",
                       "-i", host.identity, portFlag, String(host.port)]
        if let known = host.knownHosts { options += ["-o", "UserKnownHostsFile=\(known)"] }
        return options
    }

    /// The argv of `ssh HOST COMMAND` (the command is one shell line for the host's login shell).
    func argv(_ command: String, stdinNull: Bool = true) -> [String] {
        ["/usr/bin/ssh"] + (stdinNull ? ["-n"] : []) + options() + [destination, command]
    }

    /// Runs `command` on the host; its exit status, standard output and the last lines of its standard error.
    /// `timeout` real seconds at most (then the ssh client is killed: status -1).
    @discardableResult
    func run(_ command: String, input: FileHandle? = nil, output: FileHandle? = nil,
             timeout: Double = 30) -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh")
        process.arguments = Array(argv(command, stdinNull: input == nil).dropFirst())
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = output ?? outPipe
        process.standardError = errPipe
        do { try process.run() } catch { return (-1, "", "cannot start ssh: \(error)") }
        // Both pipes are read to their end on threads of their own, so a large output never blocks the host.
        let out = Box(""), err = Box("")
        let group = DispatchGroup()
        if output == nil { read(outPipe, into: out, group) }
        read(errPipe, into: err, group)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            _ = group.wait(timeout: .now() + 2)
            return (-1, out.value, "no answer within \(Int(timeout)) s")
        }
        process.waitUntilExit()
        _ = group.wait(timeout: .now() + 5)
        return (process.terminationStatus, out.value, err.value.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private func read(_ pipe: Pipe, into box: Box, _ group: DispatchGroup) {
        group.enter()
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread {
            let data = handle.readDataToEndOfFile()
            box.value = String(decoding: data, as: UTF8.self)
            group.leave()
        }
    }

    /// Copies local files to `remote` (a folder on the host) with the system's scp, modes kept (`-p`).
    func copy(_ files: [String], to remote: String, timeout: Double = 120) -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/scp")
        process.arguments = ["-q", "-p"] + options(port: "-P") + files + ["\(destination):\(remote)/"]
        let errPipe = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errPipe
        do { try process.run() } catch { return (-1, "cannot start scp: \(error)") }
        let err = Box(""), group = DispatchGroup()
        read(errPipe, into: err, group)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = group.wait(timeout: .now() + 2)
        return (process.terminationStatus, err.value.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// A value one reader thread writes and the caller reads after the thread has ended (the group orders them).
final class Box: @unchecked Sendable {
    var value: String
    init(_ value: String) { self.value = value }
}

/// One word for a host's shell: single-quoted (topology values are refused when they hold a quote).
func shellQuote(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
