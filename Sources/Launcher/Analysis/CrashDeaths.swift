import LabKit
import Markup
import SyncProtocol

/// Where each process died at a crash point (`process.killed` with `by: "crash"`), and when it came back: the report
/// says where every self-kill landed.
struct CrashDeaths {
    struct Death {
        let sim: Double
        let target: String
        let device: String?
        let point: String
        var restartedSim: Double?
        /// What the occurrence had in flight (`process.crashing {work}`); nil in run folders written before it.
        var work: Int?
    }

    var deaths: [Death] = []
    /// How many crash steps armed each point (the scenario's and the nemesis's `crash` actions).
    var armed: [String: Int] = [:]

    init(_ data: RunData) {
        // The moment of death is the process's own `process.crashing`; the launcher notices it a little later.
        var crashing: [String: Double] = [:]
        var work: [String: Int] = [:]
        for event in data.events {
            if event.type == EventCatalogue.processCrashing {
                crashing[event.proc] = event.sim
                work[event.proc] = event.int("work")
            }
            guard event.proc == "launcher" else { continue }
            switch event.type {
            case EventCatalogue.scenarioAction where event.string("action") == "crash":
                if let point = event.string("point") { armed[point, default: 0] += 1 }
            case EventCatalogue.processKilled where event.string("by") == "crash":
                let target = event.string("target") ?? "?"
                let proc = event.string("device") ?? target
                let sim = crashing.removeValue(forKey: proc) ?? event.sim
                deaths.append(Death(sim: sim, target: target, device: event.string("device"),
                                    point: event.string("point") ?? "?", restartedSim: nil,
                                    work: work.removeValue(forKey: proc)))
            case EventCatalogue.processRestarted:
                let target = event.string("target")
                if let index = deaths.lastIndex(where: { $0.target == target && $0.restartedSim == nil }) {
                    deaths[index].restartedSim = event.sim
                }
            default:
                continue
            }
        }
    }

    var json: JSONValue {
        .array(deaths.map { death in
            .object([("sim", .double((death.sim * 1000).rounded() / 1000)), ("target", .string(death.target)),
                     ("device", death.device.map { .string($0) } ?? .null), ("point", .string(death.point)),
                     ("restartedSim", death.restartedSim.map { .double(($0 * 1000).rounded() / 1000) } ?? .null)])
        })
    }

    /// Each crash point with how often it was armed and how often it fired. A point fires only at an occurrence with
    /// work in flight (a claim that holds ops, a page that holds changes, a commit that applied ops:
    /// CrashPoints.reach),
    /// so every firing counted here killed the process with something to lose.
    var coverage: [(point: String, armed: Int, fired: Int, withWork: Int)] {
        guard !armed.isEmpty || !deaths.isEmpty else { return [] }
        var fired: [String: Int] = [:]
        var withWork: [String: Int] = [:]
        for death in deaths {
            fired[death.point, default: 0] += 1
            if (death.work ?? 0) > 0 { withWork[death.point, default: 0] += 1 }
        }
        let known = CrashPoint.allCases.map(\.rawValue)
        return (known + Set(armed.keys).union(fired.keys).subtracting(known).sorted()).map {
            ($0, armed[$0] ?? 0, fired[$0] ?? 0, withWork[$0] ?? 0)
        }
    }

    var coverageJSON: JSONValue {
        .array(coverage.map { .object([("point", .string($0.point)), ("armed", .int($0.armed)),
                                       ("fired", .int($0.fired)), ("firedWithWork", .int($0.withWork))]) })
    }

    /// The report's section: each death, then each point's coverage.
    var blocks: [Block] {
        guard !deaths.isEmpty || !armed.isEmpty else { return [] }
        var table = Table(["at", "process", "point", "back at"])
        for death in deaths {
            let name = death.device.map { "\(death.target) (\($0))" } ?? death.target
            table.add([Table.Cell(formatSim(death.sim)), Table.Cell(name), Table.Cell(death.point),
                       Table.Cell(death.restartedSim.map { formatSim($0) } ?? "—")])
        }
        var points = Table(["point", "armed", "fired", "with work in flight"])
        for row in coverage {
            points.add([Table.Cell(row.point), Table.Cell(String(row.armed)),
                          row.fired == 0 && row.armed > 0 ? .strong("0: never fired") : Table.Cell(String(row.fired)),
                          Table.Cell(String(row.withWork))])
        }
        return Block.section("Crash points", "Each process that killed itself at an armed crash point.", table) + [
            .paragraph("Coverage: each point, how often the scenario armed it, how often it fired, and how often with "
                + "work in flight (`process.crashing {work}`: ops claimed or recorded, changes in a page, ops "
                + "applied). A point fires only at an occurrence with work, so the two differ only in run folders "
                + "written before that rule."),
            .table(points),
        ]
    }
}
