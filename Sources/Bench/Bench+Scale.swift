import Foundation
import LabKit
import Launcher
import SyncProtocol

/// `synclab bench --scale`: `topologies/load-10000.json5` played by real processes (40 pools, the server, the
/// broker), checked like any run; its wall time, the launcher's memory, each pool's resident set and the run's
/// figures. With `--quick`, the same shape at 200 devices and ten simulated minutes: what the suite can afford.
extension Bench {
    static let scaleTargetSec = 600.0

    mutating func measureScale() throws {
        let devices = quick ? 200 : 10_000
        let text = LoadTopology.text(devices: devices, quick: quick)
        let name = quick ? "load-\(devices)-quick" : "load-\(devices)"
        let topology = try Topology.parse(text, file: "\(name).json5", defaultName: name)
        let folder = RunFolder(root: "\(out)/\(name)")
        let started = Date()
        let run = try LabRun(topology: topology, topologyText: text, folder: folder, binDirectory: bin, quiet: true)
        try run.run()
        let ran = Date()
        let report = try Report.make(folder: folder)
        report.write()
        let finished = Date()
        let json = try JSONValue.parse(String(contentsOfFile: folder.path("report.json"), encoding: .utf8))
        record("scale.devices", Double(devices))
        record("scale.runSec", ran.timeIntervalSince(started))
        record("scale.reportSec", finished.timeIntervalSince(ran))
        record("scale.wallSec", finished.timeIntervalSince(started))
        record("scale.passed", report.passed ? 1 : 0)
        let cost = json["cost"]
        record("scale.pools", cost?["pools"]?.doubleValue ?? .nan)
        record("scale.events", cost?["events"]?.doubleValue ?? .nan)
        record("scale.launcherPeakMB", cost?["reportPeakMB"]?.doubleValue ?? .nan)
        record("scale.launcherRunPeakMB", cost?["launcherPeakMB"]?.doubleValue ?? .nan)
        let pools = cost?["poolMemory"]?.arrayValue ?? []
        let resident = pools.compactMap { $0["residentMB"]?.doubleValue }
        let peaks = pools.compactMap { $0["peakMB"]?.doubleValue }
        record("scale.poolResidentMBMedian", median(resident) ?? .nan)
        record("scale.poolPeakMBMax", peaks.max() ?? .nan)
        record("scale.poolsResidentMBTotal", resident.isEmpty ? .nan : resident.reduce(0, +))
        record("scale.cpuSeconds", ["serverCpuSeconds", "brokerCpuSeconds", "deviceCpuSeconds"]
            .compactMap { cost?[$0]?.doubleValue }.reduce(0, +))
        record("scale.opsSaved", json["ops"]?["saved"]?.doubleValue ?? .nan)
        record("scale.passes", json["passes"]?["total"]?.doubleValue ?? .nan)
        record("scale.hintsDelivered", json["hints"]?["delivered"]?.doubleValue ?? .nan)
        record("scale.propagationP50Ms", json["propagation"]?["p50Ms"]?.doubleValue ?? .nan)
        record("scale.propagationP99Ms", json["propagation"]?["p99Ms"]?.doubleValue ?? .nan)
        guard report.passed else {
            throw LabError.io("bench: \(name) failed: " + report.invariants.filter { !$0.held }
                .map { "\($0.name): \($0.detail)" }.joined(separator: "; ") + " (\(folder.root)/report.md)")
        }
    }

    /// The scale run's rows (`synclab bench --scale`).
    var scaleTable: String {
        let wall = value("scale.wallSec")
        guard wall.isFinite else { return "scale: not measured\n" }
        let devices = Int(value("scale.devices"))
        var lines = [
            String(format: "scale: %d devices in %.0f pools   %.1f s wall (run %.1f s + report %.1f s)   %@",
                   devices, value("scale.pools"), wall, value("scale.runSec"), value("scale.reportSec"),
                   quick ? "(--quick: no target)" : wall <= Self.scaleTargetSec
                       ? "met (≤ 600 s)" : String(format: "MISSED (≤ 600 s: %.2f×)", wall / Self.scaleTargetSec)),
            String(format: "  verdict %@; %.0f ops saved, %.0f passes, %.0f hints delivered, %.0f events",
                   value("scale.passed") == 1 ? "PASS" : "FAIL", value("scale.opsSaved"), value("scale.passes"),
                   value("scale.hintsDelivered"), value("scale.events")),
            String(format: "  propagation p50 %.1f ms, p99 %.1f ms; CPU of every lab process %.1f s",
                   value("scale.propagationP50Ms"), value("scale.propagationP99Ms"), value("scale.cpuSeconds")),
            String(format: "  launcher peak %.0f MB (%.0f MB before the checks); pools resident %.0f MB in all, "
                   + "median %.1f MB, largest peak %.1f MB",
                   value("scale.launcherPeakMB"), value("scale.launcherRunPeakMB"),
                   value("scale.poolsResidentMBTotal"), value("scale.poolResidentMBMedian"),
                   value("scale.poolPeakMBMax")),
        ]
        lines.append("  each pool's resident set: report.md's cost section")
        return lines.joined(separator: "\n") + "\n"
    }
}
