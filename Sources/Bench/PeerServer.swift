import Foundation
import LabKit
import Launcher

/// A peer's server process (nats-server or redis-server), started by the bench on a free port with its store in a
/// folder of the bench's, and stopped by it.
final class PeerServer {
    let name: String
    let port: Int
    let process: RoleProcess
    /// The durability the server runs with, stated beside its figures.
    let durability: String

    private init(name: String, port: Int, process: RoleProcess, durability: String) {
        self.name = name
        self.port = port
        self.process = process
        self.durability = durability
    }

    var pid: pid_t { process.pid }

    /// Where an executable is on PATH (or the usual sbin folders, where Debian puts nats-server), nil when absent.
    static func find(_ executable: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/bin"]
        return folders.map { "\($0)/\(executable)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// nats-server with JetStream, its file store in `folder`/store.
    static func nats(folder: String) throws -> PeerServer {
        guard let executable = find("nats-server") else {
            throw LabError.io("nats-server is not installed (scripts/lab bench installs it; or apt-get install "
                + "nats-server)")
        }
        let port = freePort()
        try FileManager.default.createDirectory(atPath: "\(folder)/store", withIntermediateDirectories: true)
        let process = RoleProcess(name: "nats-server", executable: executable,
                                   arguments: ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", "\(folder)/store"],
                                   logPath: "\(folder)/nats-server.log")
        try process.start()
        return PeerServer(name: "nats", port: port, process: process,
                          durability: "JetStream file store, server defaults: no fsync per message (periodic sync)")
    }

    /// redis-server with an append-only file written before each reply and fsync'ed every second (the nearest to
    /// SQLite WAL with synchronous=normal: nothing lost when the process dies, up to a second on power loss).
    static func redis(folder: String) throws -> PeerServer {
        guard let executable = find("redis-server") else {
            throw LabError.io("redis-server is not installed (scripts/lab bench installs it; or apt-get install "
                + "redis-server)")
        }
        let port = freePort()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = RoleProcess(name: "redis-server", executable: executable,
                                   arguments: ["--port", String(port), "--bind", "127.0.0.1", "--dir", folder,
                                               "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
                                               "--daemonize", "no", "--logfile", ""],
                                   logPath: "\(folder)/redis-server.log")
        try process.start()
        return PeerServer(name: "redis", port: port, process: process,
                          durability: "AOF written before each reply, appendfsync everysec; no RDB snapshots")
    }

    /// Retries `connect` until the server answers, for up to 20 s; fails naming the server and its log.
    func waitReady<T>(_ connect: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(20)
        var lastError: Error?
        while Date() < deadline {
            if process.poll() {
                throw LabError.io("\(name) server exited at start (\(process.exitDescription)); see \(process.logPath)")
            }
            do { return try connect() } catch { lastError = error }
            usleep(50_000)
        }
        throw LabError.io("\(name) server did not answer within 20 s: \(lastError.map { "\($0)" } ?? "?")")
    }

    func stop() {
        process.signal(SIGTERM)
        if !process.wait(timeout: 5) { process.killNow() }
    }
}
