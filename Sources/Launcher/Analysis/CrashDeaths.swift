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
    }

    var deaths: [Death] = []

    init(_ data: RunData) {
        // The moment of death is the process's own `process.crashing`; the launcher notices it a little later.
        var crashing: [String: Double] = [:]
        for event in data.events {
            if event.type == "process.crashing" { crashing[event.proc] = event.sim }
            guard event.proc == "launcher" else { continue }
            switch event.type {
            case "process.killed" where event.string("by") == "crash":
                let target = event.string("target") ?? "?"
                let sim = crashing.removeValue(forKey: event.string("device") ?? target) ?? event.sim
                deaths.append(Death(sim: sim, target: target, device: event.string("device"),
                                    point: event.string("point") ?? "?", restartedSim: nil))
            case "process.restarted":
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

    var markdown: String {
        guard !deaths.isEmpty else { return "" }
        var md = "\n## Crash points\n\nEach process that killed itself at an armed crash point.\n\n"
        md += "| at | process | point | back at |\n| --- | --- | --- | --- |\n"
        for death in deaths {
            let name = death.device.map { "\(death.target) (\($0))" } ?? death.target
            let back = death.restartedSim.map { formatSim($0) } ?? "—"
            md += "| \(formatSim(death.sim)) | \(name) | \(death.point) | \(back) |\n"
        }
        return md
    }
}
