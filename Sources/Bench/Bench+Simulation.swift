import CSystem
import Foundation
import LabKit
import Launcher
import SyncProtocol

/// The simulation's speed and memory (`synclab sim`), measured here, never in tests: the shipped seven-days
/// topology; a generated day of many devices in accounts of four (1,000; 100 with `--quick`); seed 000's experiment at
/// its published size, 400 installs per platform for seven simulated days (not with `--quick`); with `--sim-10k`,
/// 10,000 devices for one simulated day. For each: the simulation's wall seconds (start to the databases written),
/// the checks and report's seconds after it, simulated device-days per wall second of the simulation, and the peak
/// resident memory it added per simulated device.
extension Bench {
    /// One measured simulated run.
    struct SimFigures {
        var devices: Double
        var deviceDays: Double
        var simSec: Double
        var reportSec: Double
        var memoryPerDeviceKB: Double
        var storage: String
        var events: Int
    }

    mutating func measureSimulation() throws {
        let seven = EndToEndPaths.topology("seven-days")
        try measureSimulated(key: "sevenDays", topology: try Topology.load(path: seven),
                             text: try String(contentsOfFile: seven, encoding: .utf8))

        let devices = quick ? 100 : 1_000
        try measureSimulated(key: "scale", generated: Self.scaleTopology(devices: devices), name: "scale-\(devices)")

        if !quick {
            let path = EndToEndPaths.topology("seeds/seed000-after")
            let text = try Self.seed000Topology(installsPerPlatform: 400,
                                                from: try String(contentsOfFile: path, encoding: .utf8))
            try measureSimulated(key: "seed000", generated: text, name: "seed000-after-400")
        }
        if tenThousand {
            try measureSimulated(key: "tenThousand", generated: Self.scaleTopology(devices: 10_000),
                                 name: "scale-10000")
        }
    }

    /// A generated topology, written beside the runs (so `synclab sim` can replay it), then measured.
    private mutating func measureSimulated(key: String, generated text: String, name: String) throws {
        let file = "\(out)/\(name).json5"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        var topology = try Topology.parse(text, file: file, defaultName: name)
        if key != "seed000" { topology.seed = 1 }
        try measureSimulated(key: key, topology: topology, text: text)
    }

    private mutating func measureSimulated(key: String, topology: Topology, text: String) throws {
        progress("simulating \(topology.name): \(topology.devices.count) devices, "
            + String(format: "%.0f simulated days", topology.duration / 86_400))
        let figures = try simulate(topology, text: text, into: "\(out)/sim-\(topology.name)")
        record("simulation.\(key).devices", figures.devices)
        record("simulation.\(key).simulatedDays", topology.duration / 86_400)
        record("simulation.\(key).wallSec", figures.simSec)
        record("simulation.\(key).reportSec", figures.reportSec)
        record("simulation.\(key).deviceDaysPerSec", figures.deviceDays / figures.simSec)
        record("simulation.\(key).memoryPerDeviceKB", figures.memoryPerDeviceKB)
        record("simulation.\(key).events", Double(figures.events))
        storages[key] = figures.storage
    }

    /// Plays `topology` into `root` and judges it. The simulation's seconds run from `SimRun`'s start to its
    /// databases written (its own start-up included); the report's seconds are `Report.make` and `write` after it.
    /// Memory: the peak resident size during the simulation (VmHWM, reset first) over the resident size before it,
    /// after giving freed memory back, per device. A run whose report fails is an error: the figures would not be of
    /// a working lab.
    private func simulate(_ topology: Topology, text: String, into root: String) throws -> SimFigures {
        try? FileManager.default.removeItem(atPath: root)
        _ = synclab_release_free_memory()
        Self.resetPeakResident()
        let before = Self.residentKB("VmRSS")
        let start = SimClock.monotonicNanos()
        let run = try SimRun(topology: topology, topologyText: text, folder: RunFolder(root: root),
                             replay: "synclab bench", quiet: true)
        try run.run()
        let simulated = SimClock.monotonicNanos()
        let peak = Self.residentKB("VmHWM")
        let report = try Report.make(folder: RunFolder(root: root))
        report.write()
        let reported = SimClock.monotonicNanos()
        guard report.passed else {
            throw LabError.io("bench: the simulated \(topology.name) run failed: "
                + (report.invariants + report.checks).filter { !$0.held }.map(\.name).joined(separator: ", "))
        }
        let devices = Double(topology.devices.count)
        return SimFigures(devices: devices, deviceDays: devices * topology.duration / 86_400,
                          simSec: Double(simulated - start) / 1e9, reportSec: Double(reported - simulated) / 1e9,
                          memoryPerDeviceKB: max(0, peak - before) / devices, storage: run.storage.rawValue,
                          events: Self.lineCount(RunFolder(root: root).path("events.jsonl")))
    }

    /// Seed 000's experiment at `installsPerPlatform` installs per platform: the shipped
    /// `topologies/seeds/seed000-after.json5` (`text`), its settings, behaviour and reference bands unchanged, with
    /// its four installs per platform (each its own account) made `installsPerPlatform`.
    static func seed000Topology(installsPerPlatform n: Int, from text: String) throws -> String {
        var accounts: [String] = []
        var ids: [String] = []
        for (platform, extra) in [("android", ", charging: true"), ("ios", ""), ("web", ", start: \"closed\"")] {
            for k in 1...n {
                accounts.append("    { id: \"\(platform)-\(k)\", devices: [{ id: \"\(platform)-\(k)\", platform: "
                    + "\"\(platform)\", engagement: 0.43\(extra) }] },")
                ids.append("\"\(platform)-\(k)\"")
            }
        }
        var out = text
        out.replaceSubrange(try listRange(after: "\n  accounts:", in: out[...]),
                            with: "\n" + accounts.joined(separator: "\n") + "\n  ")
        let behaviours = try listRange(after: "\n  behaviours:", in: out[...])
        out.replaceSubrange(try listRange(after: "accounts:", in: out[behaviours]), with: ids.joined(separator: ", "))
        return out.replacingOccurrences(of: "description: \"", with: "description: \"\(n) installs per platform. ")
    }

    /// Where the contents of the first `[…]` list after `marker` lie in `text` (between its brackets; indices of
    /// the string `text` is part of), brackets inside strings aside.
    static func listRange(after marker: String, in text: Substring) throws -> Range<String.Index> {
        guard let at = text.range(of: marker), let open = text[at.upperBound...].firstIndex(of: "[") else {
            throw LabError.config("bench: no \(marker.trimmingCharacters(in: .whitespacesAndNewlines)) [ … ] list")
        }
        var depth = 0
        var inString = false
        var escaped = false
        var index = open
        while index < text.endIndex {
            let c = text[index]
            if inString {
                if escaped {
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else if c == "\"" {
                    inString = false
                }
            } else if c == "\"" {
                inString = true
            } else if c == "[" {
                depth += 1
            } else if c == "]" {
                depth -= 1
                if depth == 0 { return text.index(after: open)..<index }
            }
            index = text.index(after: index)
        }
        throw LabError.config("bench: the \(marker.trimmingCharacters(in: .whitespacesAndNewlines)) list is not closed")
    }

    /// `devices` devices in accounts of four (a user's phone, tablet and laptops, platforms in turn), each opened four
    /// times a simulated day with an edit a session, for one simulated day, at a time scale of 600. At 3,600 the
    /// launcher's own steps, one after another as `LabRun` takes them, eat the simulated day at 10,000 devices: the
    /// start-up pings take four simulated hours, and heal and quiesce (50,000 control calls) about forty, in which
    /// every open tab and periodic job keeps syncing: more passes than the day itself (docs/SIMULATION.md).
    static func scaleTopology(devices: Int) -> String {
        let accounts = max(1, (devices + 3) / 4)
        var accountList: [String] = []
        var ids: [String] = []
        for a in 0..<accounts {
            let count = min(4, devices - 4 * a)
            accountList.append("{ id: \"u\(a)\", devices: [{ generate: \(count), prefix: \"u\(a)-\" }] }")
            ids += (1...count).map { "\"u\(a)-\($0)\"" }
        }
        return """
            {
              description: "\(devices) simulated devices in accounts of four for one day (synclab bench)",
              timeScale: 600, duration: "1d", heal: { timeoutSec: 600 },
              accounts: [\(accountList.joined(separator: ", "))],
              behaviours: [{ devices: [\(ids.joined(separator: ", "))], opensPerDay: 4, editsPerSession: 1,
                             sessionMinutes: 3, drafts: 20 }],
            }
            """
    }

    /// Resets this process's peak resident size (VmHWM), so the next reading is the peak of what follows.
    static func resetPeakResident() {
        _ = FileManager.default.createFile(atPath: "/proc/self/clear_refs", contents: Data("5".utf8))
    }

    static func lineCount(_ path: String) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        return data.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
    }

    /// A field of /proc/self/status in kB (VmRSS now, VmHWM the peak).
    static func residentKB(_ field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return .nan }
        return Double(line.split(separator: " ").dropFirst().first ?? "") ?? .nan
    }

    /// The simulation's rows alone (`synclab bench --simulation`).
    var simulationTable: String {
        let rows = simulationRows
        let w0 = rows.map(\.0.count).max()!, w1 = rows.map(\.1.count).max()!, w2 = rows.map(\.2.count).max()!
        return rows.map {
            $0.0.padding(toLength: w0 + 2, withPad: " ", startingAt: 0)
                + $0.1.padding(toLength: w1 + 2, withPad: " ", startingAt: 0)
                + $0.2.padding(toLength: w2 + 2, withPad: " ", startingAt: 0) + $0.3
        }.joined(separator: "\n") + "\n"
    }

    var simulationRows: [(String, String, String, String)] {
        var rows: [(String, String, String, String)] = []
        func add(_ key: String, _ title: String, target: Double?) {
            let wall = value("simulation.\(key).wallSec")
            guard wall.isFinite else { return }
            let report = value("simulation.\(key).reportSec")
            let total = wall + report
            let devices = Int(value("simulation.\(key).devices"))
            let days = value("simulation.\(key).simulatedDays")
            rows.append(("sim: \(title)", String(format: "%.1f s", wall),
                         String(format: "+ report %.1f s; %d devices × %.0f d, %.0f device-days/s, %.0f kB/device, %@",
                                report, devices, days, value("simulation.\(key).deviceDaysPerSec"),
                                value("simulation.\(key).memoryPerDeviceKB"), storages[key] ?? "?"),
                         target.map { total <= $0 ? "met (≤ \(Int($0)) s)" : String(format: "MISSED (≤ %.0f s: %.1f×)",
                             $0, total / $0) }
                            ?? ""))
        }
        add("sevenDays", "seven-days", target: 5)
        add("scale", "one day, accounts of 4", target: nil)
        add("seed000", "seed 000, 400 installs/platform × 7 d", target: 60)
        add("tenThousand", "10,000 devices × 1 d", target: 300)
        return rows
    }
}

/// Where the shipped topologies are, from the executable's folder (`.build/<config>/` inside the package) or the
/// current directory.
enum EndToEndPaths {
    static func topology(_ name: String) -> String {
        let candidates = ["topologies/\(name).json5",
                          LauncherCommand.executableDirectory() + "/../../topologies/\(name).json5",
                          LauncherCommand.executableDirectory() + "/../../../topologies/\(name).json5"]
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[0]
    }
}
