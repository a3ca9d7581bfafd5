import Foundation
import LabKit
import SQLite
import SyncDevice
import SyncProtocol
import SyncServer

/// One event of `events.jsonl`. A class, though immutable: the checks pass millions of them around, and a copy is
/// then one reference, not three.
final class Event {
    let wall: Int64
    let sim: Double
    let proc: String
    let type: String
    let fields: JSONValue

    init(wall: Int64, sim: Double, proc: String, type: String, fields: JSONValue) {
        self.wall = wall
        self.sim = sim
        self.proc = proc
        self.type = type
        self.fields = fields
    }

    subscript(key: String) -> JSONValue? { fields[key] }
    func string(_ key: String) -> String? { fields[key]?.stringValue }
    func int(_ key: String) -> Int? { fields[key]?.intValue }
}

/// One device of the run: what the topology says of it and its database, read after the run.
struct DeviceData {
    let id: String
    let account: String
    let platform: Platform
    let settings: DeviceSettings
    var state = LedgerSnapshot()
    var readError: String?

    var ops: [LedgerSnapshot.OpRow] { state.ops }
    var cursor: Int { state.cursor }
}

/// Everything a run folder holds that the checks and the report read: the merged events, the server's and every
/// device's database, the processes' own counters.
package struct RunData {
    let folder: RunFolder
    let topology: Topology
    let seed: UInt64
    let timeScale: Double
    var events: [Event] = []
    /// The server's database; empty when it could not be read (`serverReadError` says why).
    var server = ServerSnapshot()
    /// Every change of every account, by account then seq.
    var changes: [ServerSnapshot.ChangeRow] = []
    /// Each account's head: its last change's seq.
    var heads: [String: Int] = [:]
    var serverReadError: String?
    var devices: [DeviceData] = []
    package var stats: JSONValue = .null
    /// Simulated time the heal phase began (the end of the scenario), from the launcher's `phase` event.
    var scenarioEndSim: Double
    /// The run's simulated 0 in wall µs (run.json), to place a ledger's wall-clock stamps in simulated time.
    var epochMicros: Int64 = 0
    private var deviceIndex: [String: Int] = [:]

    /// The device with this id, if the topology has it.
    func device(_ id: String) -> DeviceData? { deviceIndex[id].map { devices[$0] } }

    /// Simulated seconds of a wall-clock stamp (µs since 1970).
    func simTime(wall: Int64) -> Double { Double(wall - epochMicros) / 1_000_000 * timeScale }

    /// Devices whose cursor was behind their account's head when the scenario ended, so that only heal's forced
    /// passes brought them up to date (the cursor from their last move before heal; the head from the server's
    /// applied events before heal).
    func behindAtHeal() -> [(device: String, cursor: Int, head: Int)] {
        var head: [String: Int] = [:]
        var cursor: [String: Int] = [:]
        for event in events where event.sim < scenarioEndSim {
            if event.proc == "server", event.type == EventCatalogue.opApplied, let account = event.string("account"),
               let seq = event.int("seq") {
                head[account] = max(head[account] ?? 0, seq)
            } else if event.type == EventCatalogue.cursorMoved, let to = event.int("to"),
                deviceIndex[event.proc] != nil {
                cursor[event.proc] = to
            }
        }
        return devices.compactMap { device in
            let h = head[device.account] ?? 0
            let c = cursor[device.id] ?? 0
            return c < h ? (device.id, c, h) : nil
        }
    }

    static func load(folder: RunFolder, ignoreExpect: Bool = false) throws -> RunData {
        let topologyPath = folder.path("topology.json5")
        guard FileManager.default.fileExists(atPath: topologyPath) else {
            throw LabError.config("\(folder.root) is not a run folder: it has no topology.json5")
        }
        var topology: Topology
        var epoch: Int64 = 0
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
            epoch = Int64(run["epochMicros"]?.intValue ?? 0)
            if run["ignoreExpect"]?.boolValue == true { topology.expect = nil }
        }
        if ignoreExpect { topology.expect = nil }
        var data = RunData(folder: folder, topology: topology, seed: topology.seed, timeScale: topology.timeScale,
                           scenarioEndSim: topology.duration)
        data.epochMicros = epoch
        data.events = try readEvents(folder.path("events.jsonl"))
        if let heal = data.events.first(where: { $0.proc == "launcher" && $0.type == EventCatalogue.phase
            && $0.string("name") == "heal" }) {
            data.scenarioEndSim = heal.sim
        }
        if let text = try? String(contentsOfFile: folder.path("stats.json"), encoding: .utf8) {
            data.stats = (try? JSONValue.parse(text)) ?? .null
        }
        data.readServer()
        for account in topology.accounts {
            for device in account.devices {
                data.deviceIndex[device.id] = data.devices.count
                data.devices.append(readDevice(folder: folder, spec: device, account: account.id))
            }
        }
        return data
    }

    static func readEvents(_ path: String) throws -> [Event] {
        guard var text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw LabError.io("cannot read \(path)")
        }
        var events: [Event] = []
        // Lines split on their bytes and parsed in place: a big run's file has millions of them.
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while start < bytes.count {
                let newline = memchr(base + start, 0x0A, bytes.count - start)
                let end = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? bytes.count
                defer { start = end + 1 }
                guard end > start,
                    let value = try? JSONValue.parse(utf8: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                else { continue }
                events.append(Event(wall: Int64(value["wall"]?.intValue ?? 0), sim: value["sim"]?.doubleValue ?? 0,
                                    proc: value["proc"]?.stringValue ?? "", type: value["type"]?.stringValue ?? "",
                                    fields: value))
            }
        }
        return events
    }

    private mutating func readServer() {
        do {
            server = try ServerSnapshot.read(path: folder.path("server.sqlite"))
            changes = server.changes.keys.sorted().flatMap { server.changes[$0]! }
            for account in topology.accounts { heads[account.id] = server.head(account.id) }
        } catch {
            serverReadError = "cannot read the server database: \(error)"
        }
    }

    private static func readDevice(folder: RunFolder, spec: DeviceSpec, account: String) -> DeviceData {
        var device = DeviceData(id: spec.id, account: account, platform: spec.platform, settings: spec.settings)
        do {
            device.state = try LedgerSnapshot.read(path: folder.devicePath(spec.id))
        } catch {
            device.readError = "cannot read \(spec.id)'s database: \(error)"
        }
        return device
    }
}
