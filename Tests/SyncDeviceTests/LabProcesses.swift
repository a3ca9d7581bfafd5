import Foundation
import LabControl
import LabKit
import LabTestSupport
import SQLite
import SyncProtocol
import ZeroMQ

/// Real processes for end-to-end tests: a server, a broker and devices over ipc sockets in a fresh folder, all
/// killed and reaped when the test ends.
final class LabProcesses {
    let folder: TempFolder
    let context: Context
    let scale: Double
    let epoch = SimClock.wallMicros()
    let devices: [(id: String, platform: Platform)]
    private(set) var children: [String: ChildProcess] = [:]
    /// Each process's executable and arguments, to start it again after a kill.
    private var commands: [String: (path: String, arguments: [String])] = [:]
    private(set) var controls: [String: ControlClient] = [:]

    init(scale: Double, devices: [(id: String, platform: Platform)]) throws {
        folder = TempFolder()
        context = try Context()
        self.scale = scale
        self.devices = devices
        let list = devices.map {
            "{\"id\": \"\($0.id)\", \"platform\": \"\($0.platform.rawValue)\", \"token\": \"t-\($0.id)\"}"
        }
        let accounts = "{\"accounts\": [{\"id\": \"acme\", \"devices\": [\(list.joined(separator: ", "))]}]}\n"
        try accounts.write(toFile: folder.file("accounts.json"), atomically: true, encoding: .utf8)
    }

    deinit {
        for child in children.values { child.killNow() }
    }

    func common(_ name: String) -> [String] {
        ["--control", controlEndpoint(name), "--events", events(name), "--name", name,
         "--epoch", String(epoch), "--time-scale", String(scale), "--seed", "5"]
    }

    func events(_ name: String) -> String { folder.file("\(name).jsonl") }

    /// The ipc endpoint of socket `name` in the folder.
    func endpoint(_ name: String) -> String { folder.ipc("\(name).sock") }
    func controlEndpoint(_ name: String) -> String { endpoint("\(name).control") }

    func startServer(_ extra: [String] = []) throws {
        try start("server", executable: "synclab-server", [
            "--db", folder.file("server.sqlite"), "--listen", endpoint("server"),
            "--notify", endpoint("notices"), "--accounts", folder.file("accounts.json"),
        ] + extra)
    }

    func startBroker(_ extra: [String] = []) throws {
        try start("broker", executable: "synclab-broker", [
            "--listen", endpoint("broker"), "--notices", endpoint("notices"),
            "--accounts", folder.file("accounts.json"),
        ] + extra)
    }

    func deviceArguments(_ id: String, broker: Bool = true, _ extra: [String]) -> [String] {
        let platform = devices.first { $0.id == id }?.platform ?? .android
        return ["--id", id, "--account", "acme", "--token", "t-\(id)", "--platform", platform.rawValue,
                "--db", dbPath(id), "--server", endpoint("server")]
            + (broker ? ["--broker", endpoint("broker")] : []) + extra
    }

    func dbPath(_ id: String) -> String { folder.file("\(id).sqlite") }

    func startDevice(_ id: String, broker: Bool = true, _ extra: [String] = []) throws {
        try start(id, executable: "synclab-device", deviceArguments(id, broker: broker, extra))
    }

    /// Starts a process (again, after a kill, with the same arguments) and waits until it answers `ping`.
    func start(_ name: String, executable: String, _ arguments: [String]) throws {
        if commands[name] == nil { commands[name] = (try Binaries.path(executable), arguments + common(name)) }
        try restart(name)
    }

    func restart(_ name: String) throws {
        guard let command = commands[name] else { return }
        let child = try ChildProcess(command.path, command.arguments, log: folder.file("\(name).log"))
        children[name] = child
        if controls[name] == nil {
            controls[name] = try controlClient(context, endpoint: controlEndpoint(name))
        }
        guard controls[name]!.isReady() else {
            throw LabError.io("\(name) did not answer ping: \(child.log.suffix(2_000))")
        }
    }

    func kill9(_ name: String) { children[name]?.killNow() }
    func control(_ name: String) -> ControlClient { controls[name]! }

    /// Polls `condition` every 20 ms until it holds or `limit` seconds pass.
    func wait(limit: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    func status(_ device: String) throws -> JSONValue? { try control(device).data("status", timeoutMs: 2_000) }

    /// The server's changes, in seq order.
    func serverChanges() throws -> [(seq: Int, key: String, draft: String, title: String?, body: String?,
                                      version: Int, action: String)] {
        let db = try Database(path: folder.file("server.sqlite"), synchronous: .normal)
        return try db.query("""
            SELECT seq, op_key, draft, title, body, version, action FROM changes WHERE account = 'acme' ORDER BY seq
            """) {
            ($0.int(0), $0.string(1), $0.string(2), $0.optionalString(3), $0.optionalString(4), $0.int(5), $0.string(6))
        }
    }

    /// The server's live drafts as (id, title, body, version).
    func serverDrafts() throws -> [String] {
        let db = try Database(path: folder.file("server.sqlite"), synchronous: .normal)
        return try db.query("""
            SELECT id, title, body, version FROM drafts WHERE account = 'acme' AND deleted = 0 ORDER BY id
            """) {
            "\($0.string(0))|\($0.string(1))|\($0.string(2))|\($0.int(3))"
        }
    }

    /// A device's live replica rows in the same form.
    func replica(_ id: String) throws -> [String] {
        let db = try Database(path: dbPath(id), synchronous: .normal)
        return try db.query("""
            SELECT id, coalesce(title, ''), coalesce(body, ''), version FROM drafts WHERE deleted = 0 ORDER BY id
            """) {
            "\($0.string(0))|\($0.string(1))|\($0.string(2))|\($0.int(3))"
        }
    }
}
