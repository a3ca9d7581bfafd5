import Foundation
import LabKit
import SyncProtocol

/// Latency percentiles of a set of samples, in milliseconds of real time and seconds of simulated time.
package struct Latency {
    package var count = 0
    package var p50Ms = 0.0, p95Ms = 0.0, p99Ms = 0.0, maxMs = 0.0
    var p50SimSec = 0.0, p95SimSec = 0.0, maxSimSec = 0.0

    init(realMs: [Double], simSec: [Double]) {
        count = realMs.count
        guard !realMs.isEmpty else { return }
        let r = realMs.sorted(), s = simSec.sorted()
        p50Ms = percentile(r, 0.50)
        p95Ms = percentile(r, 0.95)
        p99Ms = percentile(r, 0.99)
        maxMs = r.last!
        p50SimSec = percentile(s, 0.50)
        p95SimSec = percentile(s, 0.95)
        maxSimSec = s.last!
    }

    var json: JSONValue {
        .object([("count", .int(count)), ("p50Ms", .double(round3(p50Ms))), ("p95Ms", .double(round3(p95Ms))),
                 ("p99Ms", .double(round3(p99Ms))), ("maxMs", .double(round3(maxMs))),
                 ("p50SimSec", .double(round3(p50SimSec))), ("p95SimSec", .double(round3(p95SimSec))),
                 ("maxSimSec", .double(round3(maxSimSec)))])
    }
}

package func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

package func round3(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }

package func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// One edit's path: saved on a device, applied on the server as a change, hinted, applied on the other devices.
struct Lineage {
    struct Arrival {
        let device: String
        let trigger: String
        let pass: Int?
        let realMs: Double
        let simSec: Double
    }
    let key: String
    let device: String
    let draft: String
    let savedSim: Double
    var seq: Int?
    var hints: [(id: String, fate: String)] = []
    var arrivals: [Arrival] = []
}

struct PlatformRow {
    let platform: String
    let devices: Int
    /// Passes the platform's scheduler granted (periodic work, iOS refresh windows, the web interval timer): what
    /// seed 000 counted as "syncs".
    let syncs: Int
    /// Every pass during the scenario, whatever its trigger.
    let allPasses: Int
    let medianGapMinutes: Double?
    let unsyncedAt24hPercent: Double
    let guarantee: String
    /// Scheduler-granted syncs of each install (seed 000 counts per install: 672 expected is one install's week).
    var syncsPerInstall: [Int] = []
    /// The scenario's length over the desired interval (the median of the installs' `desiredIntervalMin`).
    var expectedPerInstall = 0.0
    var desiredIntervalMinutes = 0.0
    /// App opens during the scenario, every install together.
    var opens = 0
    /// Scheduler-granted runs by simulated hour of day (0–23; simulated time 0 is midnight).
    var backgroundByHour: [Int] = Array(repeating: 0, count: 24)
    /// Each install's guarantee: the first one it reported (a fresh install) and the last (measured).
    var guaranteeByDevice: [(device: String, first: String, last: String)] = []
    /// Share of installs whose first guarantee already carried a measured gap (a fresh install should not).
    var freshGuaranteeObservedPercent: Double?
    /// The median, over installs, of the gap the last guarantee reported (observed or typical), in minutes.
    var reportedMedianGapMinutes: Double?

    var syncsPerInstallMean: Double {
        syncsPerInstall.isEmpty ? 0 : Double(syncsPerInstall.reduce(0, +)) / Double(syncsPerInstall.count)
    }

    /// The spec ("edits sync within the desired interval") is met when the median gap is within 1.5 × the desired
    /// interval and the mean count reaches 80 % of the expected one: 612 of 672 at a 16-minute median is met.
    var specMet: Bool {
        guard let gap = medianGapMinutes, expectedPerInstall > 0 else { return false }
        return gap <= 1.5 * desiredIntervalMinutes && syncsPerInstallMean >= 0.8 * expectedPerInstall
    }

    /// Share (percent) of background runs that started between 02:00 and 05:00, nil without any.
    var nightSharePercent: Double? {
        let all = backgroundByHour.reduce(0, +)
        guard all > 0 else { return nil }
        return round3(100 * Double(backgroundByHour[2] + backgroundByHour[3] + backgroundByHour[4]) / Double(all))
    }

    /// Every pass (whatever its trigger) per app open, nil without opens.
    var passesPerOpen: Double? { opens == 0 ? nil : round3(Double(allPasses) / Double(opens)) }
}

/// The figures of the report, from the events and databases of a run.
package struct RunFigures {
    var hints = HintAccounting.Counts()
    package var opsSaved = 0
    var opsApplied = 0, resends = 0, unknownOutcomes = 0, needsAttention = 0, conflicts = 0
    /// Passes during the scenario; heal's and quiesce's forced passes are counted apart (`healPasses…`), so a phone
    /// that never went offline shows no connectivity pass.
    var passesTotal = 0
    var passesByTrigger: [String: Int] = [:]
    var passesByDevice: [String: [String: Int]] = [:]
    /// Of those, the passes that sent nothing and applied nothing, per device (what `wasted-passes` counts).
    var idlePassesByDevice: [String: Int] = [:]
    var healPassesTotal = 0
    var healPassesByTrigger: [String: Int] = [:]
    package var propagation = Latency(realMs: [], simSec: [])
    package var propagationByPath: [String: Latency] = [:]
    var platforms: [PlatformRow] = []
    /// What each device's scheduler granted and reported, for rows over any set of devices (a platform, a variant).
    var perDevice = PerDevice()
    var lineages: [Lineage] = []
    var metrics: [(String, String)] = []
    var wallSeconds = 0.0

    init(_ data: RunData) {
        let accounting = HintAccounting(data)
        hints = accounting.counts
        let accountOf = Dictionary(data.devices.map { ($0.id, $0.account) }, uniquingKeysWith: { a, _ in a })
        if let first = data.events.first, let last = data.events.last {
            wallSeconds = Double(last.wall - first.wall) / 1_000_000
        }

        // Ops.
        var saved: [String: Event] = [:]
        var savedOrder: [String] = []
        var appliedOnServer: [String: Event] = [:]
        var arrivals: [String: [Lineage.Arrival]] = [:]
        var passStarts: [String: [Double]] = [:]
        var allPasses: [String: Int] = [:]
        var lastPassEnd: [String: Double] = [:]
        var dataAges: [Double] = []
        var opensOf: [String: Int] = [:]
        var firstGuarantee: [String: Event] = [:]
        var lastGuarantee: [String: Event] = [:]
        for event in data.events {
            switch event.type {
            case EventCatalogue.opSaved where accountOf[event.proc] != nil:
                opsSaved += 1
                if let key = event.string("key") {
                    saved[key] = event
                    savedOrder.append(key)
                }
            case EventCatalogue.opApplied:
                if let key = event.string("key"), appliedOnServer[key] == nil { appliedOnServer[key] = event }
            case EventCatalogue.opSent:
                if (event.int("attempt") ?? 1) > 1 { resends += 1 }
            case EventCatalogue.opResult:
                if event.string("outcome") == "unknown" { unknownOutcomes += 1 }
            case EventCatalogue.passStart where accountOf[event.proc] != nil:
                let trigger = event.string("trigger") ?? "?"
                if event.sim >= data.scenarioEndSim {
                    healPassesTotal += 1
                    healPassesByTrigger[trigger, default: 0] += 1
                    continue
                }
                passesTotal += 1
                passesByTrigger[trigger, default: 0] += 1
                passesByDevice[event.proc, default: [:]][trigger, default: 0] += 1
                if event.sim <= data.scenarioEndSim && trigger != "manual" {
                    allPasses[event.proc, default: 0] += 1
                    if RunFigures.schedulerTriggers.contains(trigger) {
                        passStarts[event.proc, default: []].append(event.sim)
                    }
                }
            case EventCatalogue.passEnd where accountOf[event.proc] != nil:
                if event.fields["cutOff"]?.boolValue != true { lastPassEnd[event.proc] = event.sim }
                let started = event.sim - (event.fields["durationSec"]?.doubleValue ?? 0)
                if started < data.scenarioEndSim && (event.int("sent") ?? 0) == 0 && (event.int("pulled") ?? 0) == 0 {
                    idlePassesByDevice[event.proc, default: 0] += 1
                }
            case EventCatalogue.guarantee where accountOf[event.proc] != nil:
                if firstGuarantee[event.proc] == nil { firstGuarantee[event.proc] = event }
                if event.sim <= data.scenarioEndSim { lastGuarantee[event.proc] = event }
            case EventCatalogue.appForeground where accountOf[event.proc] != nil:
                if event.sim <= data.scenarioEndSim { opensOf[event.proc, default: 0] += 1 }
                if event.sim <= data.scenarioEndSim, let synced = lastPassEnd[event.proc] {
                    dataAges.append(event.sim - synced)
                }
            case EventCatalogue.changeApplied where accountOf[event.proc] != nil:
                guard let key = event.string("key"), let origin = saved[key],
                    origin.proc != event.proc else { continue }
                if arrivals[key]?.contains(where: { $0.device == event.proc }) == true { continue }
                arrivals[key, default: []].append(Lineage.Arrival(
                    device: event.proc, trigger: event.string("trigger") ?? "?", pass: event.int("pass"),
                    realMs: Double(event.wall - origin.wall) / 1000, simSec: event.sim - origin.sim))
            default:
                break
            }
        }
        opsApplied = data.changes.count
        conflicts = data.changes.filter(\.conflict).count
        needsAttention = data.devices.reduce(0) { $0 + $1.ops.filter { $0.status == .needsAttention }.count }

        // Propagation: saved on one device → applied on another device of the account.
        let all = arrivals.values.flatMap { $0 }
        propagation = Latency(realMs: all.map(\.realMs), simSec: all.map(\.simSec))
        for (path, group) in Dictionary(grouping: all, by: \.trigger) {
            propagationByPath[path] = Latency(realMs: group.map(\.realMs), simSec: group.map(\.simSec))
        }

        // Lineage of every edit.
        let seqOfKey = Dictionary(data.changes.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for key in savedOrder {
            guard let event = saved[key] else { continue }
            var lineage = Lineage(key: key, device: event.proc, draft: event.string("draft") ?? "?",
                savedSim: event.sim)
            if let change = seqOfKey[key] {
                lineage.seq = change.seq
                for id in accounting.hintsBySeq["\(change.account)/\(change.seq)"] ?? [] {
                    lineage.hints.append((id, accounting.fate[id] ?? "?"))
                }
            }
            lineage.arrivals = (arrivals[key] ?? []).sorted { $0.realMs < $1.realMs }
            lineages.append(lineage)
        }

        // The seed-000 table: per platform, syncs, median gap, edits still unsynced 24 h after they were saved.
        perDevice = PerDevice(passStarts: passStarts, allPasses: allPasses, opens: opensOf,
                              firstGuarantee: firstGuarantee, lastGuarantee: lastGuarantee, saved: saved,
                              savedOrder: savedOrder, appliedOnServer: appliedOnServer,
                              scenarioEndSim: data.scenarioEndSim)
        for platform in Platform.allCases {
            let devices = data.devices.filter { $0.platform == platform }
            guard !devices.isEmpty else { continue }
            platforms.append(perDevice.row(platform.rawValue, devices))
        }

        // Seed-001 metrics.
        let attempts = data.devices.flatMap { $0.ops.filter { $0.status == .completed }.map(\.attempts) }
        let retries = attempts.map { max(0, $0 - 1) }
        metrics = [
            ("unknown outcomes (replies lost or late)", "\(unknownOutcomes)"),
            ("resends with the same key", "\(resends)"),
            ("retries before resolution (mean / max)", attempts.isEmpty ? "—" :
                String(format: "%.2f / %d", Double(retries.reduce(0, +)) / Double(retries.count), retries.max() ?? 0)),
            ("ops needing attention", "\(needsAttention)"),
            ("conflicts recorded by the server", "\(conflicts)"),
            ("data age at app open (median, simulated)", median(dataAges).map { formatSim($0) } ?? "—"),
            ("data age at app open (max, simulated)", dataAges.max().map { formatSim($0) } ?? "—"),
            ("cursor lag at the end (max)",
                "\(data.devices.map { (data.heads[$0.account] ?? 0) - $0.cursor }.max() ?? 0)"),
            ("pending ops at the end", "\(data.devices.reduce(0) { $0 + $1.ops.filter(\.status.isPending).count })"),
        ]
    }

    /// The triggers a platform scheduler grants, as opposed to events (push, foreground, edits, connectivity).
    static let schedulerTriggers: Set<String> = ["periodic", "opportunistic", "interval"]

    /// The word said most often; on a tie the first said (`max(by:)` keeps the first), never a Dictionary's order,
    /// which changes from one process to the next: the same run folder must read the same.
    static func mostCommon(_ words: [String]) -> String? {
        let counts = Dictionary(grouping: words, by: { $0 }).mapValues(\.count)
        return words.max(by: { counts[$0]! < counts[$1]! })
    }

    /// The gap a guarantee event reports as measured (observed median or typical gap), in simulated seconds.
    static func reportedGap(_ event: Event) -> Double? {
        event["observedMedianGapSec"]?.doubleValue ?? event["typicalSec"]?.doubleValue
    }

    static func describeGuarantee(_ event: Event) -> String {
        let kind = event.string("kind") ?? "?"
        func minutes(_ key: String) -> String? {
            event[key]?.doubleValue.map { formatSim($0) }
        }
        switch kind {
        case "periodic":
            return "periodic(min \(minutes("minimumSec") ?? "?"), typical "
                + "\(minutes("typicalSec") ?? "not yet observed"))"
        case "opportunistic":
            return "opportunistic(median gap \(minutes("observedMedianGapSec") ?? "not yet observed"))"
        case "foregroundOnly":
            let triggers = (event["triggers"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
            return "foregroundOnly(\(triggers))"
        default:
            return kind
        }
    }
}

/// Each device's scheduler-granted runs, passes, opens and guarantees, and the edits saved and applied: what a
/// platform row (or a reference figure's variant row) is computed from.
struct PerDevice {
    var passStarts: [String: [Double]] = [:]
    var allPasses: [String: Int] = [:]
    var opens: [String: Int] = [:]
    var firstGuarantee: [String: Event] = [:]
    var lastGuarantee: [String: Event] = [:]
    var saved: [String: Event] = [:]
    var savedOrder: [String] = []
    var appliedOnServer: [String: Event] = [:]
    var scenarioEndSim = 0.0

    /// The seed-000 row of `devices`: syncs, per install, median gap, edits unsynced at 24 h, guarantees.
    func row(_ name: String, _ devices: [DeviceData]) -> PlatformRow {
        let ids = Set(devices.map(\.id))
        var gaps: [Double] = []
        var syncs = 0
        var everyPass = 0
        for device in devices {
            let starts = passStarts[device.id] ?? []
            syncs += starts.count
            everyPass += allPasses[device.id] ?? 0
            gaps += zip(starts.dropFirst(), starts).map { ($0 - $1) / 60 }
        }
        var considered = 0, unsynced = 0
        for key in savedOrder {
            guard let event = saved[key], ids.contains(event.proc), event.sim <= scenarioEndSim else { continue }
            considered += 1
            let deadline = min(event.sim + 86_400, scenarioEndSim)
            if let applied = appliedOnServer[key], applied.sim <= deadline { continue }
            unsynced += 1
        }
        let kinds = devices.compactMap { lastGuarantee[$0.id].map(RunFigures.describeGuarantee) }
        let guarantee = RunFigures.mostCommon(kinds) ?? "—"
        var row = PlatformRow(
            platform: name, devices: devices.count, syncs: syncs, allPasses: everyPass,
            medianGapMinutes: median(gaps),
            unsyncedAt24hPercent: considered == 0 ? 0 : round3(100 * Double(unsynced) / Double(considered)),
            guarantee: guarantee)
        row.syncsPerInstall = devices.map { passStarts[$0.id]?.count ?? 0 }
        row.desiredIntervalMinutes = (median(devices.map(\.settings.desiredIntervalSec)) ?? 900) / 60
        row.expectedPerInstall = round3(scenarioEndSim / (row.desiredIntervalMinutes * 60))
        row.opens = devices.reduce(0) { $0 + (opens[$1.id] ?? 0) }
        for device in devices {
            for start in passStarts[device.id] ?? [] {
                let hour = Int(start.truncatingRemainder(dividingBy: 86_400) / 3_600)
                row.backgroundByHour[min(max(hour, 0), 23)] += 1
            }
        }
        row.guaranteeByDevice = devices.map { device in
            (device.id, firstGuarantee[device.id].map(RunFigures.describeGuarantee) ?? "—",
             lastGuarantee[device.id].map(RunFigures.describeGuarantee) ?? "—")
        }
        let firsts = devices.compactMap { firstGuarantee[$0.id] }
        if !firsts.isEmpty {
            let observed = firsts.filter { RunFigures.reportedGap($0) != nil }.count
            row.freshGuaranteeObservedPercent = round3(100 * Double(observed) / Double(firsts.count))
        }
        row.reportedMedianGapMinutes = median(devices.compactMap { lastGuarantee[$0.id] }
            .compactMap(RunFigures.reportedGap)).map { round3($0 / 60) }
        return row
    }
}
