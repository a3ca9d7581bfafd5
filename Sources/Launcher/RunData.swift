import Foundation
import LabKit
import SQLite
import SyncProtocol

/// One event of `events.jsonl`.
struct Event {
    let wall: Int64
    let sim: Double
    let proc: String
    let type: String
    let fields: JSONValue

    subscript(key: String) -> JSONValue? { fields[key] }
    func string(_ key: String) -> String? { fields[key]?.stringValue }
    func int(_ key: String) -> Int? { fields[key]?.intValue }
}

/// A server change as the checks need it.
struct ServerChange {
    let account: String
    let seq: Int
    let draft: String
    let key: String
    let origin: String
    let conflict: Bool
}

/// A draft as a replica or the server holds it.
struct DraftRow: Equatable {
    let id: String
    let title: String
    let body: String
    let version: Int
}

/// An op of a device's ledger.
struct LedgerOp {
    let key: String
    let status: String
    let attempts: Int
    let lastError: String
}

/// One device's database, read after the run.
struct DeviceData {
    let id: String
    let account: String
    let platform: Platform
    var ops: [LedgerOp] = []
    var drafts: [DraftRow] = []
    var cursor = 0
    var readError: String?
}

/// Everything a run folder holds that the checks and the report read: the merged events, the server's and every
/// device's database, the processes' own counters.
struct RunData {
    let folder: RunFolder
    let topology: Topology
    let seed: UInt64
    let timeScale: Double
    var events: [Event] = []
    var changes: [ServerChange] = []
    var serverDrafts: [String: [DraftRow]] = [:]
    var heads: [String: Int] = [:]
    var serverReadError: String?
    var devices: [DeviceData] = []
    var stats: JSONValue = .null
    /// Simulated time the heal phase began (the end of the scenario), from the launcher's `phase` event.
    var scenarioEndSim: Double

    static func load(folder: RunFolder) throws -> RunData {
        let topologyPath = folder.path("topology.json5")
        guard FileManager.default.fileExists(atPath: topologyPath) else {
            throw LabError.config("\(folder.root) is not a run folder: it has no topology.json5")
        }
        var topology: Topology
        do {
            topology = try Topology.load(path: topologyPath)
        } catch {
            throw LabError.config("\(error)")
        }
        // Tokens and the effective seed and scale are those the run used.
        if let text = try? String(contentsOfFile: folder.path("run.json"), encoding: .utf8),
           let run = try? JSONValue.parse(text)
        {
            if let name = run["name"]?.stringValue { topology.name = name }
            if let seed = run["seed"]?.intValue { topology.seed = UInt64(seed) }
            if let scale = run["timeScale"]?.doubleValue { topology.timeScale = scale }
            if let duration = run["duration"]?.doubleValue { topology.duration = duration }
        }
        var data = RunData(folder: folder, topology: topology, seed: topology.seed, timeScale: topology.timeScale,
                           scenarioEndSim: topology.duration)
        data.events = try readEvents(folder.path("events.jsonl"))
        if let heal = data.events.first(where: { $0.proc == "launcher" && $0.type == "phase" && $0.string("name") == "heal" }) {
            data.scenarioEndSim = heal.sim
        }
        if let text = try? String(contentsOfFile: folder.path("stats.json"), encoding: .utf8) {
            data.stats = (try? JSONValue.parse(text)) ?? .null
        }
        data.readServer()
        for account in topology.accounts {
            for device in account.devices {
                data.devices.append(readDevice(folder: folder, id: device.id, account: account.id, platform: device.platform))
            }
        }
        return data
    }

    static func readEvents(_ path: String) throws -> [Event] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw LabError.io("cannot read \(path)")
        }
        var events: [Event] = []
        for line in text.split(separator: "\n") {
            guard let value = try? JSONValue.parse(String(line)) else { continue }
            events.append(Event(wall: Int64(value["wall"]?.intValue ?? 0), sim: value["sim"]?.doubleValue ?? 0,
                                proc: value["proc"]?.stringValue ?? "", type: value["type"]?.stringValue ?? "",
                                fields: value))
        }
        return events
    }

    private mutating func readServer() {
        do {
            let db = try Database(path: folder.path("server.sqlite"))
            changes = try db.query("SELECT account, seq, draft, op_key, origin, conflict FROM changes ORDER BY account, seq") {
                ServerChange(account: $0.string(0), seq: $0.int(1), draft: $0.string(2), key: $0.string(3),
                             origin: $0.string(4), conflict: $0.bool(5))
            }
            for account in topology.accounts {
                serverDrafts[account.id] = try db.query(
                    "SELECT id, title, body, version FROM drafts WHERE account = ? AND deleted = 0 ORDER BY id", account.id
                ) { DraftRow(id: $0.string(0), title: $0.string(1), body: $0.string(2), version: $0.int(3)) }
                heads[account.id] = try db.scalarInt("SELECT MAX(seq) FROM changes WHERE account = ?", account.id) ?? 0
            }
        } catch {
            serverReadError = "cannot read the server database: \(error)"
        }
    }

    private static func readDevice(folder: RunFolder, id: String, account: String, platform: Platform) -> DeviceData {
        var device = DeviceData(id: id, account: account, platform: platform)
        do {
            let db = try Database(path: folder.devicePath(id))
            device.ops = try db.query("SELECT key, status, attempts, COALESCE(last_error, '') FROM ops ORDER BY local_seq") {
                LedgerOp(key: $0.string(0), status: $0.string(1), attempts: $0.int(2), lastError: $0.string(3))
            }
            device.drafts = try db.query(
                "SELECT id, COALESCE(title, ''), COALESCE(body, ''), version FROM drafts WHERE deleted = 0 ORDER BY id"
            ) { DraftRow(id: $0.string(0), title: $0.string(1), body: $0.string(2), version: $0.int(3)) }
            device.cursor = try db.first("SELECT value FROM state WHERE key = 'cursor'") { Int($0.string(0)) ?? $0.int(0) } ?? 0
        } catch {
            device.readError = "cannot read \(id)'s database: \(error)"
        }
        return device
    }
}
