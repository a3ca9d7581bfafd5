import Markup
import SyncProtocol

/// What a run cost the machine, so runs of 3, 100 and 1,000 devices can be compared: processes, wall time, events,
/// resident memory (from stats.json's `residentMB`, read before the stop) and CPU seconds (`cpuSeconds`).
package struct RunCost {
    var devices = 0
    var processes = 0
    var pools = 0
    var wallSeconds = 0.0
    var events = 0
    var residentMBTotal = 0.0
    /// Resident MB of the device and pool processes divided by the devices they host.
    var residentMBPerDevice = 0.0
    /// Memory the processes hold alone (anonymous pages), without the shared libraries every process maps.
    var privateMBTotal = 0.0
    var privateMBPerDevice = 0.0
    var serverCPUSeconds: Double?
    var brokerCPUSeconds: Double?
    var deviceCPUSeconds: Double?
    /// Each pool process: its devices, resident MB when the run ended and its peak (stats.json `peakMB`).
    var poolMemory: [(pool: String, devices: Int, residentMB: Double?, peakMB: Double?)] = []
    /// The launcher's resident and peak MB as the run ended (stats.json `launcherMB`), and the peak of the process
    /// that made this report once it had read the run and checked it (the launcher itself after `synclab run`).
    var launcherResidentMB: Double?
    var launcherPeakMB: Double?
    var reportPeakMB: Double?
    /// CPU seconds each process spent in the scenario (`scenarioCPUSeconds`), and the changes delivered in the run
    /// (one edit applied on one other device): what `synclab bench` divides to set a run beside its peers.
    var scenarioCPU: [String: Double] = [:]
    var delivered = 0

    init(_ data: RunData, wallSeconds: Double, delivered: Int = 0, reportPeakMB: Double? = nil) {
        let pooled = data.topology.poolAssignment
        devices = data.devices.count
        pools = Set(pooled.values).count
        processes = 2 + devices - pooled.count + pools
        self.wallSeconds = wallSeconds
        events = data.events.count
        let isDeviceProcess: (String) -> Bool = { $0 != "server" && $0 != "broker" }
        let memory = data.stats["residentMB"]?.objectValue ?? []
        residentMBTotal = memory.compactMap { $0.1.doubleValue }.reduce(0, +)
        let deviceMB = memory.filter { isDeviceProcess($0.0) }.compactMap { $0.1.doubleValue }.reduce(0, +)
        residentMBPerDevice = devices > 0 ? deviceMB / Double(devices) : 0
        let own = data.stats["privateMB"]?.objectValue ?? []
        privateMBTotal = own.compactMap { $0.1.doubleValue }.reduce(0, +)
        let deviceOwn = own.filter { isDeviceProcess($0.0) }.compactMap { $0.1.doubleValue }.reduce(0, +)
        privateMBPerDevice = devices > 0 ? deviceOwn / Double(devices) : 0
        let cpu = data.stats["cpuSeconds"]?.objectValue ?? []
        serverCPUSeconds = cpu.first(where: { $0.0 == "server" })?.1.doubleValue
        brokerCPUSeconds = cpu.first(where: { $0.0 == "broker" })?.1.doubleValue
        let deviceCPU = cpu.filter { isDeviceProcess($0.0) }.compactMap { $0.1.doubleValue }
        deviceCPUSeconds = deviceCPU.isEmpty ? nil : deviceCPU.reduce(0, +)
        let peaks = data.stats["peakMB"]?.objectValue ?? []
        let hosted = data.stats["pools"]?.objectValue ?? []
        let value = { (list: [(String, JSONValue)], name: String) in list.first { $0.0 == name }?.1.doubleValue }
        // pool-2 before pool-10.
        poolMemory = hosted.sorted { ($0.0.count, $0.0) < ($1.0.count, $1.0) }.map { pool, devices in
            (pool, devices.intValue ?? 0, value(memory, pool), value(peaks, pool))
        }
        launcherResidentMB = data.stats["launcherMB"]?["residentMB"]?.doubleValue
        launcherPeakMB = data.stats["launcherMB"]?["peakMB"]?.doubleValue
        self.reportPeakMB = reportPeakMB
        scenarioCPU = Self.scenarioCPUSeconds(data.stats)
        self.delivered = delivered
    }

    /// Each process's CPU seconds from the scenario's start to the heal's (stats.json `cpuSecondsAtHeal` −
    /// `cpuSecondsAtScenario`); empty when the run recorded neither (the simulation has no processes).
    package static func scenarioCPUSeconds(_ stats: JSONValue) -> [String: Double] {
        func seconds(_ name: String) -> [String: Double] {
            Dictionary((stats[name]?.objectValue ?? []).compactMap { pair in pair.1.doubleValue.map { (pair.0, $0) } },
                       uniquingKeysWith: { first, _ in first })
        }
        let start = seconds("cpuSecondsAtScenario"), end = seconds("cpuSecondsAtHeal")
        guard !start.isEmpty else { return [:] }
        // A process restarted in the scenario whose counter is below where it began counts from its restart (what it
        // spent before the kill is not known).
        return end.reduce(into: [:]) { cpu, process in
            let begun = start[process.key] ?? 0
            cpu[process.key] = process.value < begun ? process.value : process.value - begun
        }
    }

    /// Milliseconds of CPU, every process counted, per change delivered during the scenario; nil without a
    /// delivery or without the scenario's CPU figures.
    var cpuMsPerDelivered: Double? {
        guard delivered > 0, !scenarioCPU.isEmpty else { return nil }
        return scenarioCPU.values.reduce(0, +) * 1000 / Double(delivered)
    }

    /// The scenario's CPU by role: the server, the broker, and the device and pool processes together.
    var scenarioCPUByRole: [(role: String, seconds: Double)] {
        let devices = scenarioCPU.filter { $0.key != "server" && $0.key != "broker" }.values.reduce(0, +)
        return [("server", scenarioCPU["server"] ?? 0), ("broker", scenarioCPU["broker"] ?? 0), ("devices", devices)]
    }

    var json: JSONValue {
        func rounded(_ value: Double) -> JSONValue { .double((value * 100).rounded() / 100) }
        let perDelivered: JSONValue = cpuMsPerDelivered.map { .double(($0 * 1000).rounded() / 1000) } ?? .null
        let byRole: JSONValue = scenarioCPU.isEmpty ? .null
            : .object(scenarioCPUByRole.map { ($0.role, rounded($0.seconds)) })
        return .object([
            ("devices", .int(devices)), ("processes", .int(processes)), ("pools", .int(pools)),
            ("wallSeconds", rounded(wallSeconds)), ("events", .int(events)),
            ("residentMBTotal", rounded(residentMBTotal)), ("residentMBPerDevice", rounded(residentMBPerDevice)),
            ("privateMBTotal", rounded(privateMBTotal)), ("privateMBPerDevice", rounded(privateMBPerDevice)),
            ("serverCpuSeconds", serverCPUSeconds.map(rounded) ?? .null),
            ("brokerCpuSeconds", brokerCPUSeconds.map(rounded) ?? .null),
            ("deviceCpuSeconds", deviceCPUSeconds.map(rounded) ?? .null),
            ("launcherResidentMB", launcherResidentMB.map(rounded) ?? .null),
            ("launcherPeakMB", launcherPeakMB.map(rounded) ?? .null),
            ("reportPeakMB", reportPeakMB.map(rounded) ?? .null),
            ("scenarioCpuMsPerDelivered", perDelivered), ("scenarioCpuSeconds", byRole),
            ("poolMemory", .array(poolMemory.map { pool in
                .object([("pool", .string(pool.pool)), ("devices", .int(pool.devices)),
                         ("residentMB", pool.residentMB.map(rounded) ?? .null),
                         ("peakMB", pool.peakMB.map(rounded) ?? .null)])
            })),
        ])
    }

    /// The report's section: the run's size and cost, the launcher's memory, each pool's.
    var blocks: [Block] {
        func cell(_ value: Double?) -> Table.Cell { Table.Cell(value.map { String(format: "%.2f", $0) } ?? "—") }
        func count(_ n: Int) -> Table.Cell { Table.Cell(String(n)) }
        let table = Table(["devices", "processes", "pools", "wall s", "events", "resident MB total", "MB per device",
                           "own MB total", "own MB per device", "server CPU s", "broker CPU s", "device CPU s"],
                          rows: [Table.Row([count(devices), count(processes), count(pools), cell(wallSeconds),
                                            count(events), cell(residentMBTotal), cell(residentMBPerDevice),
                                            cell(privateMBTotal), cell(privateMBPerDevice), cell(serverCPUSeconds),
                                            cell(brokerCPUSeconds), cell(deviceCPUSeconds)])])
        var b: [Block] = [
            .heading("Cost (how it grows with devices)", level: 2), .table(table),
            .paragraph("Memory and CPU are read from /proc just before the processes are stopped. Resident memory "
                + "counts the shared libraries (Swift runtime, Foundation) in every process; own memory is what each "
                + "process holds alone."),
            .paragraph("Launcher: \(cell(launcherResidentMB).plain) MB resident as the run ended, peak "
                + "\(cell(launcherPeakMB).plain) MB; peak \(cell(reportPeakMB).plain) MB once this report's checks "
                + "had read the run."),
        ]
        if let perDelivered = cpuMsPerDelivered {
            let total = scenarioCPU.values.reduce(0, +)
            let shares = scenarioCPUByRole.map { "\($0.role) " + String(format: "%.0f %%", 100 * $0.seconds / total) }
            b.append(.paragraph(String(format: "During the scenario: %.3f ms of CPU per delivered change, every "
                + "process counted (%.2f s over %d deliveries; ", perDelivered, total, delivered)
                + shares.joined(separator: ", ")
                + "). `synclab bench` sets this figure beside NATS JetStream and Redis (docs/PERFORMANCE.md)."))
        }
        guard !poolMemory.isEmpty else { return b }
        b.append(.table(Table(["pool", "devices", "resident MB", "peak MB"], rows: poolMemory.map { pool in
            Table.Row([Table.Cell(pool.pool), count(pool.devices), cell(pool.residentMB), cell(pool.peakMB)])
        })))
        return b
    }
}
