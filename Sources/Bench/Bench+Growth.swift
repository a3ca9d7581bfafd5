import Markup
import Foundation
import Launcher
import SyncProtocol

/// Cost growth: SyncLab's propagation and CPU per delivered edit at 3, 10, 30, 100 and 300 devices of one account.
extension Bench {
    /// The sizes of the growth curve beyond the 3- and 100-device runs (which are the curve's own points), with each
    /// run's edits and spacing: the spacing grows with the devices so every edit is delivered before the next comes
    /// on two cores (≈ 0.3–0.5 ms of CPU per receiver and edit). 300 device processes do not fit beside the other
    /// work of a small machine: they run in two pools, one per core (≈ 90 ms of CPU per edit in all).
    var growthRuns: [(devices: Int, edits: Int, spacingMs: Int, key: String, pools: Int)] {
        quick
            ? [(10, 50, 10, "devices10", 0), (30, 30, 20, "devices30", 0)]
            : [(10, 300, 10, "devices10", 0), (30, 200, 20, "devices30", 0), (300, 100, 250, "devices300pooled", 2)]
    }

    /// The points of the curve, in order of devices: (devices, key, pooled).
    var growthPoints: [(devices: Int, key: String, pooled: Bool)] {
        var points: [(Int, String, Bool)] = [(3, "devices3", false)]
        points += growthRuns.map { ($0.devices, $0.key, $0.pools > 0) }
        let hundred = value("propagation.devices100.devices")
        points.append((hundred.isFinite ? Int(hundred) : (quick ? 20 : 100), "devices100", false))
        points.append((hundred.isFinite ? Int(hundred) : (quick ? 20 : 100), "devices100pooled", true))
        return points.sorted { ($0.0, $0.2 ? 1 : 0) < ($1.0, $1.2 ? 1 : 0) }
    }

    mutating func measureGrowth() {
        for run in growthRuns {
            section("growth: \(run.devices) devices of one account\(run.pools > 0 ? " in \(run.pools) pools" : "")") {
                try $0.measurePropagation(devices: run.devices, edits: run.edits, spacingMs: run.spacingMs,
                    key: run.key,
                                          pools: run.pools)
            }
        }
        // Exponents over the device processes (3 … 100), and over the pooled points apart.
        for (name, pooled) in [("processes", false), ("pooled", true)] {
            let points = growthPoints.filter { $0.pooled == pooled }
            let cpu = points.map { (Double($0.devices), value("propagation.\($0.key).cpuMsPerEditAll")) }
            let p50 = points.map { (Double($0.devices), value("propagation.\($0.key).p50Ms")) }
            record("growth.\(name).cpuExponent", GrowthPlot.exponent(cpu) ?? .nan)
            record("growth.\(name).p50Exponent", GrowthPlot.exponent(p50) ?? .nan)
        }
    }

    /// CPU per delivered edit of a lab run: every process's CPU from the scenario's start to its end (the bench's
    /// scenarios end a second after the last edit's deliveries; healing and quiescing are left out), over the edits
    /// delivered (one edit applied on one other device); and the same for one edit to all its receivers.
    mutating func recordCost(key: String, report: Report) {
        let scenario = RunCost.scenarioCPUSeconds(report.data.stats)
        let spent = scenario.values.reduce(0, +)
        let delivered = report.figures.propagation.count
        let edits = report.figures.opsSaved
        guard delivered > 0, edits > 0, !scenario.isEmpty else { return }
        record("propagation.\(key).cpuMsPerEdit", spent * 1000 / Double(delivered))
        record("propagation.\(key).cpuMsPerEditAll", spent * 1000 / Double(edits))
    }

    /// bench.html: the growth plots and the figures' table.
    var html: String {
        let processes = growthPoints.filter { !$0.pooled }, pooled = growthPoints.filter(\.pooled)
        func series(_ metric: String) -> [GrowthPlot.Series] {
            func points(_ list: [(devices: Int, key: String, pooled: Bool)]) -> [(x: Double, y: Double)] {
                list.map { (Double($0.devices), value("propagation.\($0.key).\(metric)")) }
            }
            var all = [GrowthPlot.Series(name: "SyncLab, processes", color: "#1f77b4", points: points(processes),
                line: true),
                       GrowthPlot.Series(name: "SyncLab, pooled", color: "#17becf", points: points(pooled), line: true)]
            for (peer, color) in [("nats", "#d62728"), ("redis", "#2ca02c")] {
                let n = value("peers.\(peer).devices100.devices")
                let pts = [(3.0, value("peers.\(peer).devices3.\(metric)")),
                    (n, value("peers.\(peer).devices100.\(metric)"))]
                all.append(GrowthPlot.Series(name: peer == "nats" ? "NATS JetStream" : "Redis streams", color: color,
                                             points: pts.map { (x: $0.0, y: $0.1) }, line: true))
            }
            return all
        }
        func exponent(_ key: String) -> String {
            let v = value(key)
            return v.isFinite ? String(format: "%.2f", v) : "—"
        }
        var page = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>synclab bench</title>\n"
        page += "<style>body{font-family:sans-serif;margin:24px;max-width:1180px}pre{font-size:12px;background:#f6f6f6;"
        page += "padding:8px}.plots{display:flex;flex-wrap:wrap;gap:16px}</style></head><body>\n"
        page += "<h1>synclab bench\(quick ? " (quick)" : "")</h1>\n"
        page += "<p>\(Markup.text(machineLine))</p>\n<h2>Cost growth with devices of one account</h2>\n"
        page += "<p>Growth exponent (least-squares slope of log cost against log devices), device processes: CPU per "
            + "edit "
        page += "to all receivers N^\(exponent("growth.processes.cpuExponent")), propagation p50 "
        page += "N^\(exponent("growth.processes.p50Exponent")); pooled: CPU "
            + "N^\(exponent("growth.pooled.cpuExponent")), "
        page += "p50 N^\(exponent("growth.pooled.p50Exponent")). O(N) work per edit is an exponent of 1.</p>\n"
        page += "<div class=\"plots\">\n"
        page += GrowthPlot.svg(title: "Propagation p50 (saved on A → committed on B)", yLabel: "ms",
            series: series("p50Ms"))
        page += GrowthPlot.svg(title: "CPU per edit, all receivers", yLabel: "CPU ms per edit",
            series: series("cpuMsPerEditAll"))
        page += GrowthPlot.svg(title: "CPU per delivered edit", yLabel: "CPU ms", series: series("cpuMsPerEdit"))
        page += "</div>\n<h2>Figures</h2>\n<pre>\(Markup.text(table))</pre>\n</body></html>\n"
        return page
    }

    var machineLine: String {
        machine.map { "\($0.0): \($0.1.stringValue ?? $0.1.description)" }.joined(separator: ", ")
    }
}
