import Foundation
import LabKit
import Launcher
import SyncProtocol

/// The simulation's speed and memory (`synclab sim`): the shipped seven-days topology's wall time, simulated
/// device-days per real second on a generated topology of many devices for one simulated day, and the resident
/// memory each simulated device adds. Measured here, never in tests.
extension Bench {
    mutating func measureSimulation() throws {
        let seven = EndToEndPaths.topology("seven-days")
        let topology = try Topology.load(path: seven)
        let text = try String(contentsOfFile: seven, encoding: .utf8)
        let sevenSeconds = try simulate(topology, text: text, into: "\(out)/sim-seven-days")
        record("simulation.sevenDaysWallSec", sevenSeconds)
        record("simulation.sevenDaysDeviceDaysPerSec", Double(topology.devices.count) * topology.duration / 86_400
            / sevenSeconds)

        let devices = quick ? 100 : 1_000
        let scaleText = Self.scaleTopology(devices: devices)
        var scale = try Topology.parse(scaleText, file: "sim-scale.json5", defaultName: "sim-scale")
        scale.seed = 1
        let before = Self.residentKB("VmRSS")
        let scaleSeconds = try simulate(scale, text: scaleText, into: "\(out)/sim-scale-\(devices)",
                                        peak: { Self.residentKB("VmHWM") })
        let peak = lastPeakKB
        record("simulation.scaleDevices", Double(devices))
        record("simulation.scaleWallSec", scaleSeconds)
        record("simulation.deviceDaysPerSec", Double(devices) * scale.duration / 86_400 / scaleSeconds)
        record("simulation.memoryPerDeviceKB", max(0, peak - before) / Double(devices))
    }

    /// Plays `topology` into `root`; the real seconds the simulation took (not its report, which is checked after).
    private mutating func simulate(_ topology: Topology, text: String, into root: String,
                                   peak: () -> Double = { .nan }) throws -> Double
    {
        try? FileManager.default.removeItem(atPath: root)
        let run = try SimRun(topology: topology, topologyText: text, folder: RunFolder(root: root),
                             replay: "synclab bench", quiet: true)
        let start = SimClock.monotonicNanos()
        try run.run()
        let seconds = Double(SimClock.monotonicNanos() - start) / 1e9
        lastPeakKB = peak()
        let report = try Report.make(folder: RunFolder(root: root))
        report.write()
        guard report.passed else {
            throw LabError.io("bench: the simulated \(topology.name) run failed: "
                + (report.invariants + report.checks).filter { !$0.held }.map(\.name).joined(separator: ", "))
        }
        return seconds
    }

    /// `devices` devices in accounts of four (a user's phone, tablet and laptops, platforms in turn), each opened four
    /// times a simulated day with an edit a session, for one simulated day.
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
              timeScale: 3600, duration: "1d", heal: { timeoutSec: 600 },
              accounts: [\(accountList.joined(separator: ", "))],
              behaviours: [{ devices: [\(ids.joined(separator: ", "))], opensPerDay: 4, editsPerSession: 1,
                             sessionMinutes: 3, drafts: 20 }],
            }
            """
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
        let seven = value("simulation.sevenDaysWallSec")
        let perSec = value("simulation.deviceDaysPerSec")
        return [
            ("sim: seven-days wall time", String(format: "%.2f s", seven),
             String(format: "%.0f device-days/s", value("simulation.sevenDaysDeviceDaysPerSec")),
             seven <= 5 ? "met" : String(format: "MISSED (≤ 5 s: %.1f×)", seven / 5)),
            ("sim: device-days per second", String(format: "%.0f", perSec),
             String(format: "%.0f devices (accounts of 4) × 1 day in %.1f s", value("simulation.scaleDevices"),
                    value("simulation.scaleWallSec")), ""),
            ("sim: memory per simulated device", String(format: "%.0f kB", value("simulation.memoryPerDeviceKB")),
             "peak resident growth / devices (SQLite connection, instance, ledger cache)", ""),
        ]
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
