import LabKit
import Markup
import SyncProtocol

/// What a run's nemesis did, from its events: the schedule it drew (`nemesis.schedule`), the faults carried out
/// (`scenario.action` steps marked `nemesis`) by kind and target, those that failed, the crash points that fired,
/// the ops in flight at each server death and the device deaths that landed mid-pass. Nil for a run without one.
struct NemesisFigures {
    var scheduled = 0
    var skipped = 0
    var carriedOut = 0
    var failed = 0
    /// Kind → target → faults carried out.
    var byKind: [String: [String: Int]] = [:]
    var crashesFired = 0
    /// Ops sent and not yet answered when the server died, one entry per death.
    var inFlightAtServerDeaths: [Int] = []
    var deviceDeaths = 0
    var deviceDeathsMidPass = 0

    init?(_ data: RunData) {
        guard data.events.contains(where: { $0.type == EventCatalogue.nemesisSchedule }) else { return nil }
        let pools = data.topology.poolAssignment
        var inFlight: Set<String> = []
        var passing: Set<String> = []
        for event in data.events {
            switch event.type {
            case EventCatalogue.nemesisSchedule:
                scheduled = event.int("faults") ?? 0
                skipped = event.int("skipped") ?? 0
            case EventCatalogue.scenarioAction:
                guard let kind = event.string("nemesis"), !kind.hasSuffix(".end") else { continue }
                carriedOut += 1
                // A partition names no target: its halves are what it cut.
                let halves = event["halves"]?.arrayValue?.map {
                    ($0.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ",")
                }.joined(separator: " | ")
                let target = event.string("target") ?? halves ?? "?"
                byKind[kind, default: [:]][target, default: 0] += 1
            case EventCatalogue.scenarioFailed where event.string("nemesis") != nil:
                failed += 1
            case EventCatalogue.opSent:
                if let key = event.string("key") { inFlight.insert(key) }
            case EventCatalogue.opResult:
                if let key = event.string("key") { inFlight.remove(key) }
            case EventCatalogue.passStart:
                passing.insert(event.proc)
            case EventCatalogue.passEnd, EventCatalogue.passKilled:
                passing.remove(event.proc)
            case EventCatalogue.processKilled:
                if event.string("by") == "crash" { crashesFired += 1 }
                let target = event.string("target") ?? ""
                if target == "server" {
                    inFlightAtServerDeaths.append(inFlight.count)
                } else if target != "broker" {
                    let devices = target.hasPrefix("pool-") ? pools.filter { $0.value == target }.map(\.key) : [target]
                    deviceDeaths += devices.count
                    deviceDeathsMidPass += devices.filter { passing.contains($0) }.count
                    for device in devices { passing.remove(device) }
                }
            default:
                continue
            }
        }
    }

    var json: JSONValue {
        .object([
            ("scheduled", .int(scheduled)), ("skippedByLimits", .int(skipped)), ("carriedOut", .int(carriedOut)),
            ("failed", .int(failed)),
            ("byKind", .object(byKind.keys.sorted().map { kind in
                let targets = byKind[kind]!
                return (kind, .object([("total", .int(targets.values.reduce(0, +))),
                                       ("byTarget", .object(targets.keys.sorted().map { ($0, .int(targets[$0]!)) }))]))
            })),
            ("crashPointsFired", .int(crashesFired)),
            ("opsInFlightAtServerDeaths", .array(inFlightAtServerDeaths.map { .int($0) })),
            ("deviceDeaths", .int(deviceDeaths)), ("deviceDeathsMidPass", .int(deviceDeathsMidPass)),
        ])
    }

    /// One line for the terminal summary.
    var summary: String {
        let kinds = byKind.keys.sorted().map { "\($0) \(byKind[$0]!.values.reduce(0, +))" }.joined(separator: ", ")
        return "nemesis: \(carriedOut) of \(scheduled) faults carried out (\(kinds)), \(failed) failed, "
            + "\(skipped) skipped by limits, \(crashesFired) crash points fired"
    }

    /// The report's section: what was scheduled and carried out, and each kind's faults by target.
    var blocks: [Block] {
        let deaths: String = inFlightAtServerDeaths.isEmpty ? "none died"
            : inFlightAtServerDeaths.map { String($0) }.joined(separator: ", ")
        let table = Table(["kind", "faults", "by target"], rows: byKind.keys.sorted().map { kind in
            let targets = byKind[kind]!
            let list: String = targets.keys.sorted().map { "\($0) \(targets[$0]!)" }.joined(separator: ", ")
            return Table.Row([Table.Cell(kind), Table.Cell(String(targets.values.reduce(0, +))), Table.Cell(list)])
        })
        return Block.section("Nemesis", "\(scheduled) faults scheduled from the seed (nemesis.json5), \(skipped) "
            + "drawn faults skipped by the limits; \(carriedOut) carried out, \(failed) failed; \(crashesFired) crash "
            + "points fired. Ops in flight at each server death: \(deaths); device deaths mid-pass: "
            + "\(deviceDeathsMidPass) of \(deviceDeaths).", table)
    }
}
