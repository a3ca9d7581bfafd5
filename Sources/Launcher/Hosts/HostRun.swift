import Foundation
import LabKit
import SyncProtocol

/// A run whose processes are placed on hosts (docs/HOSTS.md): checks every host before anything starts, chooses
/// each socket's address on its host, copies the binaries and the run's files there with scp, builds each role's
/// ssh process, measures the hosts' clocks, cuts and heals the network between them, and at the end brings every
/// host's events, logs and SQLite files back, so the run folder reads exactly like a local one.
final class HostRun {
    let placement: Placement
    let folder: RunFolder
    let runID: String
    /// Ports are chosen per host from a base drawn once per run: the hosts' own port spaces are not visible here.
    private var nextPort: [String: Int] = [:]
    private let basePort = Int.random(in: 20_000...40_000)
    private(set) var clocks: [String: [ClockOffset]] = [:]
    /// Where an ssh failure stopped the run, for hosts.json and the report.
    private(set) var failures: [String] = []
    private(set) var partitions: [String] = []
    /// Pooled device → its pool, so a partition may name a pooled device.
    let poolOf: [String: String]
    /// Hosts with partition rules now, and every host that ever had some (their chains go at the end).
    var cut: Set<String> = [] {
        didSet { everCut.formUnion(cut) }
    }
    private(set) var everCut: Set<String> = []

    init(placement: Placement, folder: RunFolder, poolOf: [String: String]) {
        self.placement = placement
        self.folder = folder
        self.poolOf = poolOf
        self.runID = (folder.root as NSString).lastPathComponent
    }

    /// The hosts the run uses, in declaration order.
    func usedHosts(_ processes: [String]) -> [HostSpec] {
        let names = Set(processes.map { placement.host(of: $0) })
        return placement.hosts.filter { names.contains($0.name) }
    }

    func ssh(_ host: String) -> SSH { SSH(host: placement.host(named: host)!) }

    func remoteRoot(_ host: HostSpec) -> String { "\(host.directory)/synclab-\(runID)-\(host.name)" }

    /// A socket of the run (`server`, `notices`, `broker`, `NAME.control`) on the host of the process that binds it.
    func endpoint(_ socket: String) -> String {
        var process = socket.hasSuffix(".control") ? String(socket.dropLast(8)) : socket
        if process == "notices" { process = "broker" }
        guard let host = placement.host(named: placement.host(of: process)) else {
            // A process on this machine, in a run that mixes `local` with hosts: on the address the hosts reach.
            return "tcp://\(placement.localAddress ?? "127.0.0.1"):\(freePort())"
        }
        let port = nextPort[host.name, default: basePort]
        nextPort[host.name] = port + 1
        return "tcp://\(host.address):\(port)"
    }

    // MARK: - Before anything starts

    /// Logs in to every host the run uses (`true` over ssh): an unreachable address, a refused key or an unknown
    /// host key fails here, naming the topology file, the key and the host.
    func preflight(_ processes: [String]) throws {
        let hosts = usedHosts(processes)
        let answers = concurrently(hosts) { SSH(host: $0).run("command -v tar >/dev/null && echo ok", timeout: 20) }
        for (host, answer) in zip(hosts, answers) {
            guard answer.status == 0, answer.out.hasPrefix("ok") else {
                let why = answer.err.split(separator: "\n").last.map(String.init) ?? "exit \(answer.status)"
                throw LabError.config("\(placement.file):\(host.line): hosts.\(host.name): cannot log in to "
                    + "\(host.user)@\(host.address):\(host.port) with \(host.identity): \(why)")
            }
        }
    }

    /// A local path of the run folder as the same file's path on `host`.
    func relocate(_ argument: String, to host: HostSpec) -> String {
        argument.hasPrefix(folder.root + "/") ? remoteRoot(host) + argument.dropFirst(folder.root.count) : argument
    }

    /// The ssh-held process of role `name` on its host; nil for one on `local`.
    func process(_ name: String, executable: String, arguments: [String]) -> RemoteProcess? {
        guard let host = placement.host(named: placement.host(of: name)) else { return nil }
        let root = remoteRoot(host)
        return RemoteProcess(name: name, ssh: SSH(host: host), executable: "\(root)/bin/\(executable)",
                             arguments: arguments.map { relocate($0, to: host) }, remoteRoot: root,
                             sshLogPath: folder.path("logs/\(name).ssh.log"))
    }

    /// Copies to each host what its processes need, and nothing more: the binaries they run, every public key, the
    /// secret key and token of each process and pooled device placed there (modes kept: 0600 in a 0700 folder),
    /// the accounts file where the server or the broker runs, and each pool's spec with the host's paths.
    func ship(processes: [String], poolDevices: [String: [String]]) throws {
        let fm = FileManager.default
        let keyFiles = ((try? fm.contentsOfDirectory(atPath: folder.path("keys"))) ?? []).sorted()
        var copies: [(host: HostSpec, files: [String], to: String)] = []
        for host in usedHosts(processes) {
            let root = remoteRoot(host)
            let here = processes.filter { placement.host(of: $0) == host.name }
            var owners = here
            for pool in here { owners += poolDevices[pool] ?? [] }
            let keys = keyFiles.filter { file in
                file.hasSuffix(".public") || owners.contains { file == "\($0).secret" || file == "\($0).token" }
            }.map { folder.path("keys/\($0)") }
            if !keys.isEmpty { copies.append((host, keys, "\(root)/keys")) }
            var top: [String] = []
            if here.contains("server") || here.contains("broker") { top.append(folder.accountsPath) }
            for pool in here where poolDevices[pool] != nil {
                let text = (try? String(contentsOfFile: folder.path("\(pool).json"), encoding: .utf8)) ?? ""
                let relocated = text.replacingOccurrences(of: "\"\(folder.root)/", with: "\"\(root)/")
                let staging = "\(folder.socketDirectory)/\(host.name)"
                try? fm.createDirectory(atPath: staging, withIntermediateDirectories: true)
                let named = "\(staging)/\(pool).json"
                guard fm.createFile(atPath: named, contents: Data(relocated.utf8)) else {
                    throw LabError.io("cannot write \(named)")
                }
                top.append(named)
            }
            if !top.isEmpty { copies.append((host, top, root)) }
        }
        // Every copy at once: start-up then costs about one scp, however many hosts.
        let answers = Answers(copies.count)
        let jobs = copies
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let copy = jobs[index]
            let done = SSH(host: copy.host).copy(copy.files, to: copy.to)
            answers.set(index, (copy.host.name, done.status, done.err))
        }
        for (index, answer) in answers.all.enumerated() where answer.status != 0 {
            throw failure(copies[index].host, "cannot copy files to \(copies[index].to): \(answer.err)")
        }
    }

    /// The host's run folder and the binaries its processes run (the slow part: done before the run's clock starts).
    func shipBinaries(_ processes: [String], binDirectory: String) throws {
        let jobs = usedHosts(processes).map { host in
            let here = processes.filter { placement.host(of: $0) == host.name }
            return (host, remoteRoot(host), Set(here.map(Self.executable)).sorted().map { "\(binDirectory)/\($0)" })
        }
        let answers = concurrently(jobs) { host, root, binaries -> String? in
            let ssh = SSH(host: host)
            // A folder only its owner may enter, as the run folder's keys/ (docs/SECURITY.md).
            let made = ssh.run("umask 077 && mkdir -p " + ["bin", "keys", "events", "logs", "devices", "pids"]
                .map { shellQuote("\(root)/\($0)") }.joined(separator: " "))
            guard made.status == 0 else { return "cannot make \(root): \(made.err)" }
            let copied = ssh.copy(binaries, to: "\(root)/bin")
            return copied.status == 0 ? nil : "cannot copy files to \(root)/bin: \(copied.err)"
        }
        for (job, answer) in zip(jobs, answers) {
            if let answer { throw failure(job.0, answer) }
        }
    }

    static func executable(_ process: String) -> String {
        process == "server" ? "synclab-server" : process == "broker" ? "synclab-broker" : "synclab-device"
    }

    private func failure(_ host: HostSpec, _ what: String) -> LabError {
        LabError.config("\(placement.file):\(host.line): hosts.\(host.name): \(what)")
    }

    // MARK: - During the run

    /// Throws when a role's ssh client failed on its own (exit 255): the host or the connection went away. The
    /// launcher then stops every process on every host; hosts.json and the report say where.
    func watch(_ processes: [String: any LabProcess]) throws {
        for (name, process) in processes.sorted(by: { $0.key < $1.key }) {
            guard let remote = process as? RemoteProcess, remote.poll(), remote.sshFailed else { continue }
            let host = remote.ssh.host
            let tail = (try? String(contentsOfFile: remote.sshLogPath, encoding: .utf8))?
                .split(whereSeparator: \.isNewline).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "no message"
            let what = "ssh to \(host.name) (\(host.address)) failed mid-run while it held \(name): \(tail)"
            failures.append(what)
            throw LabError.io(what + "; every process on every host is being stopped")
        }
    }

    /// The last 64 KiB of a process's events file on its host (a crashed process's `process.crashing` line).
    func eventsTail(_ process: String) -> String? {
        guard let host = placement.host(named: placement.host(of: process)) else { return folder.tail(of: process) }
        let path = "\(remoteRoot(host))/events/\(process).jsonl"
        let answer = SSH(host: host).run("tail -c 65536 \(shellQuote(path))", timeout: 20)
        return answer.status == 0 ? answer.out : nil
    }

    /// Each host's clock offset against the launcher's, NTP-style (`ClockOffset`), at `phase` (start or end).
    func measureClocks(_ processes: [String], phase: String) {
        let hosts = usedHosts(processes)
        let offsets = concurrently(hosts) { ClockOffset.measure(SSH(host: $0), phase: phase) }
        for (host, offset) in zip(hosts, offsets) {
            if let offset { clocks[host.name, default: []].append(offset) }
        }
    }

    // MARK: - At the end

    /// Brings every host's events, logs and SQLite files into the run folder, removes the host's folder, and
    /// writes hosts.json (each host, its processes, clock offsets, partitions, failures).
    func finish(_ processes: [String]) {
        removeChains()
        let jobs = usedHosts(processes).map { host in
            (host, remoteRoot(host), placement.host(of: "server") == host.name && processes.contains("server"))
        }
        let local = folder.root
        let fetched = concurrently(jobs) { host, root, hasServer in
            let ssh = SSH(host: host)
            var sources = ["events", "logs", "devices"].map { "\(ssh.destination):\(root)/\($0)" }
            if hasServer { sources.append("\(ssh.destination):\(root)/server.sqlite*") }
            let copied = ssh.copyBack(sources, to: local)
            ssh.run("rm -rf \(shellQuote(root))", timeout: 20)
            return copied
        }
        for (job, copied) in zip(jobs, fetched) where copied.status != 0 {
            failures.append("could not bring back \(job.0.name)'s files: \(copied.err)")
        }
        let here = processes.filter { placement.host(of: $0) == Placement.local }
        let localRow: [JSONValue] = here.isEmpty ? [] : [.object([
            ("name", .string(Placement.local)), ("address", .string(placement.localAddress ?? "")),
            ("processes", .array(here.map { .string($0) })),
        ])]
        let hosts: [JSONValue] = localRow + usedHosts(processes).map { host in
            .object([
                ("name", .string(host.name)), ("address", .string(host.address)),
                ("processes", .array(processes.filter { placement.host(of: $0) == host.name }.map { .string($0) })),
                ("clock", .array((clocks[host.name] ?? []).map(\.json))),
                ("merge", ClockCorrection(clocks[host.name] ?? []).json),
            ])
        }
        folder.write("hosts.json", JSONValue.object([
            ("hosts", .array(hosts)), ("partitions", .array(partitions.map { .string($0) })),
            ("failures", .array(failures.map { .string($0) })),
        ]).description + "\n")
    }

    func recordPartition(_ line: String) { partitions.append(line) }

    /// The clock correction of every events file of a process on a host (a pooled device's file by its pool's
    /// host), for the merge of `events.jsonl`.
    func corrections(_ processes: [String]) -> [String: ClockCorrection] {
        var out: [String: ClockCorrection] = [:]
        for process in processes + poolOf.keys.sorted() {
            let host = placement.host(of: poolOf[process] ?? process)
            guard host != Placement.local else { continue }
            out[process] = ClockCorrection(clocks[host] ?? [])
        }
        return out
    }
}

extension SSH {
    /// Copies remote files and folders (`HOST:PATH`, globs allowed) into a local folder with scp, recursively.
    func copyBack(_ sources: [String], to local: String, timeout: Double = 120) -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/scp")
        process.arguments = ["-q", "-p", "-r"] + options(port: "-P") + sources + [local + "/"]
        let errPipe = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errPipe
        do { try process.run() } catch { return (-1, "cannot start scp: \(error)") }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let err = String(decoding: errPipe.fileHandleForReading.availableData, as: UTF8.self)
        return (process.terminationStatus, err.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
