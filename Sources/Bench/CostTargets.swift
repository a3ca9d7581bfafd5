/// Issue 24's targets, judged from one bench run's figures: each SyncLab figure over the best peer's of the same run,
/// the broker over the raw fan-out of the same run, and the growth exponents. Pure: `CostTargetTests` feeds it
/// figures of its own.
struct CostTarget: Equatable {
    /// The key under `targets.` in bench.json (e.g. `p50.devices3`) and the line's name.
    let key: String, name: String
    /// SyncLab ÷ the best peer (or ÷ the raw fan-out, or the exponent itself; NaN when a side was not measured),
    /// and the bound it is held to: at most (latency, CPU, growth) or at least (the broker).
    let ratio: Double, limit: Double, atMost: Bool
    /// The skeleton's figure (the lab's messages with none of its work, `floor.skeleton.*`) ÷ the same best peer: at
    /// or past the bound, no change to the lab's work can meet the target on this machine. NaN where not measured or
    /// not like for like (the pooled setup, the broker, the growth).
    var floorRatio: Double = .nan

    /// Nil when not measured (a section failed, or the peers were skipped).
    var met: Bool? {
        guard ratio.isFinite else { return nil }
        return atMost ? ratio <= limit : ratio >= limit
    }

    var verdict: String {
        let bound = (atMost ? "≤ " : "≥ ") + Self.number(limit)
        guard let met else { return "not measured (\(bound))" }
        return (met ? "met" : "MISSED") + " (\(Self.number(ratio, beside: limit)) against \(bound))"
    }

    static func number(_ x: Double) -> String {
        x.isFinite ? String(format: "%.2f", x) : "—"
    }

    /// `x` with two decimals, or with up to four when two would write it as `limit` though it is not: a growth of
    /// N^1.004 reads "MISSED (1.004 against ≤ 1.00)", not "MISSED (1.00 against ≤ 1.00)".
    static func number(_ x: Double, beside limit: Double) -> String {
        guard x.isFinite, x != limit else { return number(x) }
        let written = (2...4).map { String(format: "%.\($0)f", x) }
        return (2...4).first { String(format: "%.\($0)f", limit) != written[$0 - 2] }.map { written[$0 - 2] }
            ?? written[2]
    }

    /// The targets of a run whose figures `value` reads (NaN for a figure not measured).
    static func judge(_ value: (String) -> Double, hundred: Int) -> [CostTarget] {
        func best(_ key: String) -> Double {
            ["nats", "redis"].map { value("peers.\($0).\(key)") }.filter(\.isFinite).min() ?? .nan
        }
        func peer(_ key: String, _ name: String, lab: String, peerKey: String, limit: Double) -> CostTarget {
            let skeleton = lab.contains("pooled") ? Double.nan
                : value("floor.skeleton." + lab.dropFirst("propagation.".count))
            return CostTarget(key: key, name: name + " ÷ best peer", ratio: value(lab) / best(peerKey), limit: limit,
                              atMost: true, floorRatio: skeleton / best(peerKey))
        }
        let n = "\(hundred) devices"
        var targets = [
            peer("p50.devices3", "propagation p50, 3 devices", lab: "propagation.devices3.p50Ms",
                 peerKey: "devices3.p50Ms", limit: 1),
            peer("p99.devices3", "propagation p99, 3 devices", lab: "propagation.devices3.p99Ms",
                 peerKey: "devices3.p99Ms", limit: 1),
        ]
        // The 100-device figures as processes and as one pool: the peers' devices are threads of one process, so the
        // pool is the like-for-like setup; both are judged and printed.
        for (suffix, label) in [("", ""), ("pooled", ", one pool")] {
            targets.append(peer("p50.devices100\(suffix)", "propagation p50, \(n)\(label)",
                                lab: "propagation.devices100\(suffix).p50Ms", peerKey: "devices100.p50Ms", limit: 1))
            targets.append(peer("p99.devices100\(suffix)", "propagation p99, \(n)\(label)",
                                lab: "propagation.devices100\(suffix).p99Ms", peerKey: "devices100.p99Ms", limit: 2))
        }
        targets.append(peer("cpu.devices3", "CPU per delivered edit, 3 devices",
                            lab: "propagation.devices3.cpuMsPerEdit", peerKey: "devices3.cpuMsPerEdit", limit: 1))
        for (suffix, label) in [("", ""), ("pooled", ", one pool")] {
            targets.append(peer("cpu.devices100\(suffix)", "CPU per delivered edit, \(n)\(label)",
                                lab: "propagation.devices100\(suffix).cpuMsPerEdit",
                                peerKey: "devices100.cpuMsPerEdit", limit: 1))
        }
        targets.append(CostTarget(key: "broker", name: "broker hints/s ÷ raw fan-out",
                                  ratio: value("broker.hintsPerSec") / value("broker.rawFanoutPerSec"), limit: 0.5,
                                  atMost: false))
        for (kind, label) in [("processes", "3 … \(hundred) processes"), ("pooled", "pooled, up to 300")] {
            targets.append(CostTarget(key: "growth.\(kind)", name: "growth exponent of CPU per edit, all receivers, "
                                          + label, ratio: value("growth.\(kind).cpuExponent"), limit: 1, atMost: true))
        }
        return targets
    }
}

extension Bench {
    /// Issue 24's targets of this run, as `targets.<key>.ratio` and `targets.<key>.met` (1 or 0; absent when not
    /// measured) in bench.json.
    mutating func recordTargets() {
        for target in costTargets {
            record("targets.\(target.key).ratio", target.ratio)
            if let met = target.met { record("targets.\(target.key).met", met ? 1 : 0) }
        }
    }

    var costTargets: [CostTarget] {
        let devices = value("propagation.devices100.devices")
        return CostTarget.judge({ value($0) }, hundred: devices.isFinite ? Int(devices) : (quick ? 20 : 100))
    }

    /// The targets printed last, one line each: met or MISSED with the ratio, and where the skeleton was measured
    /// the same ratio for the lab's messages with none of its work.
    var targetTable: String {
        let targets = costTargets
        let width = targets.map(\.name.count).max() ?? 0, verdictWidth = targets.map(\.verdict.count).max() ?? 0
        let met = targets.filter { $0.met == true }.count, judged = targets.filter { $0.met != nil }.count
        let lines = targets.map { target in
            let line = target.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + target.verdict
            guard target.floorRatio.isFinite else { return line }
            return line.padding(toLength: width + 2 + verdictWidth + 2, withPad: " ", startingAt: 0)
                + "no work at all: " + CostTarget.number(target.floorRatio) + "×"
        }
        let note = targets.contains { $0.floorRatio.isFinite }
            ? "no work at all: the lab's messages alone, one process a role over libzmq, with no SQLite, CURVE, "
                + "decoding,\ndecisions or events (floor.skeleton.*), ÷ the same best peer: at or past the bound, no "
                + "change to the lab's\nwork meets that target on this machine.\n" : ""
        return "\nissue 24's targets (SyncLab ÷ the best peer of this run): \(met) of \(judged) met\n"
            + lines.joined(separator: "\n") + "\n" + note
    }
}
