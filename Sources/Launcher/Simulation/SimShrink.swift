import Foundation
import LabKit
import SyncProtocol

/// `--shrink`: delta debugging over a failing simulated run's timeline. The behaviours are expanded into the steps
/// they make for this seed (`Topology.timeline()`, so the run is the same), then halves, quarters … single steps are
/// dropped, each removal kept when the same check still fails on the same seed; the smallest failing topology found
/// is written (JSON, which is JSON5) beside the original run.
struct SimShrink {
    let path: String
    let topology: Topology
    let text: String
    let passThrough: [String]
    let original: RunFolder

    func run() -> Int32 {
        guard let target = Self.firstFailure(original) else {
            Output.stderr("synclab sim: nothing to shrink: \(original.root) did not fail\n")
            return 1
        }
        var root: JSONValue
        do {
            root = Self.json(try JSON5Parser.parse(text))
        } catch {
            Output.stderr("synclab sim: cannot read \(path): \(error)\n")
            return 2
        }
        let steps = topology.timeline().map(\.json)
        // The seed and scale this run used go into the file, so the minimal topology fails on its own.
        if case .object(var pairs) = root {
            pairs.removeAll { $0.0 == "seed" || $0.0 == "timeScale" }
            pairs.insert(("timeScale", .double(topology.timeScale)), at: 0)
            pairs.insert(("seed", .int(Int(topology.seed))), at: 0)
            root = .object(pairs)
        }
        Output.stdout("shrinking seed \(topology.seed): \(steps.count) steps (\(topology.scenario.count) written, "
            + "the rest from \(topology.behaviours.count) behaviours), keeping \"\(target)\" failing\n")
        let scratch = original.root + "-shrink"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var runs = 0
        func fails(_ kept: [Int]) -> Bool {
            runs += 1
            let candidate = Self.text(root, steps: kept.map { steps[$0] })
            guard var t = try? Topology.parse(candidate, file: path, defaultName: topology.name) else { return false }
            t.seed = topology.seed
            t.timeScale = topology.timeScale
            t.expectIgnored = topology.expectIgnored
            let folder = RunFolder(root: "\(scratch)/try-\(runs)")
            defer { try? FileManager.default.removeItem(atPath: folder.root) }
            guard let run = try? SimRun(topology: t, topologyText: candidate, folder: folder, replay: "", quiet: true,
                                         crashAnywhere: SimCommand.crashAnywhere(in: passThrough))
            else { return false }
            try? run.run()
            return Self.fails(folder, target)
        }
        var kept = Array(steps.indices)
        guard fails(kept) else {
            try? FileManager.default.removeItem(atPath: scratch)
            Output.stderr("synclab sim: the expanded timeline does not fail \"\(target)\" as the original did; "
                + "nothing shrunk\n")
            return 1
        }
        var chunk = max(1, kept.count / 2)
        while !kept.isEmpty {
            var start = 0
            var removedAny = false
            while start < kept.count {
                let candidate = Array(kept[..<start] + kept[min(kept.count, start + chunk)...])
                if fails(candidate) {
                    kept = candidate
                    removedAny = true
                    Output.stdout("  \(kept.count) steps left\n")
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removedAny { break }
            chunk = max(1, chunk / 2)
        }
        try? FileManager.default.removeItem(atPath: scratch)
        let minimal = "\(original.root)-minimal.json5"
        let header = "// shrunk by synclab sim --shrink from \(path), seed \(topology.seed): \(kept.count) of "
            + "\(steps.count) steps, \"\(target)\" still fails\n"
        let body = Self.text(root, steps: kept.map { steps[$0] })
        _ = FileManager.default.createFile(atPath: minimal, contents: Data((header + body).utf8))
        Output.stdout("minimal failing topology (\(kept.count) of \(steps.count) steps, after \(runs) runs): "
            + "\(minimal)\nreplay: " + (["synclab", "sim", minimal] + passThrough.filter { $0 == "--ignore-expect" }
                + (SimCommand.crashAnywhere(in: passThrough) > 0
                    ? ["--crash-anywhere", String(SimCommand.crashAnywhere(in: passThrough))] : []))
            .joined(separator: " ") + "\n")
        return 1
    }

    /// The first check that failed in a run folder's report, or `verdict` when only the expectation was not met.
    static func firstFailure(_ folder: RunFolder) -> String? {
        guard let report = try? Report.make(folder: folder), !report.passed else { return nil }
        return (report.invariants + report.checks).first(where: { !$0.held })?.name ?? "verdict"
    }

    static func fails(_ folder: RunFolder, _ target: String) -> Bool {
        guard let report = try? Report.make(folder: folder) else { return false }
        if target == "verdict" { return !report.passed }
        return (report.invariants + report.checks).contains { $0.name == target && !$0.held }
    }

    /// The topology with `steps` as its whole scenario and no behaviours.
    static func text(_ root: JSONValue, steps: [JSONValue]) -> String {
        guard case .object(let pairs) = root else { return root.description }
        var out: [(String, JSONValue)] = pairs.filter { $0.0 != "scenario" && $0.0 != "behaviours" }
        out.append(("scenario", .array(steps)))
        return JSONValue.object(out).description + "\n"
    }

    static func json(_ node: JSON5Node) -> JSONValue {
        switch node.value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? .int(Int(n)) : .double(n)
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(json))
        case .object(let pairs): return .object(pairs.map { ($0.key, json($0.node)) })
        }
    }
}
