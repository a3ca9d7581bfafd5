import Foundation
import LabKit
import SyncProtocol

/// `--shrink`: delta debugging over a failing simulated run's scenario steps and behaviours. It drops halves, then
/// quarters, down to single entries, keeping each removal after which the same check still fails on the same seed,
/// and writes the smallest failing topology it found (JSON, which is JSON5) beside the original run.
struct SimShrink {
    let path: String
    let topology: Topology
    let text: String
    let passThrough: [String]
    let original: RunFolder

    /// One entry that can be dropped: its array (`scenario` or `behaviours`) and its index in the original file.
    struct Item: Equatable {
        let array: String
        let index: Int
    }

    func run() -> Int32 {
        guard let target = Self.firstFailure(original) else {
            Output.stderr("synclab sim: nothing to shrink: \(original.root) did not fail\n")
            return 1
        }
        let root: JSONValue
        do {
            root = Self.json(try JSON5Parser.parse(text))
        } catch {
            Output.stderr("synclab sim: cannot read \(path): \(error)\n")
            return 2
        }
        var items: [Item] = []
        for array in ["scenario", "behaviours"] {
            for index in (root[array]?.arrayValue ?? []).indices { items.append(Item(array: array, index: index)) }
        }
        Output.stdout("shrinking seed \(topology.seed): \(items.count) steps and behaviours, keeping \"\(target)\" failing\n")
        let scratch = original.root + "-shrink"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var attempt = 0
        func fails(_ kept: [Item]) -> Bool {
            attempt += 1
            let candidate = Self.text(root, keeping: kept)
            guard var t = try? Topology.parse(candidate, file: path, defaultName: topology.name) else { return false }
            t.seed = topology.seed
            t.timeScale = topology.timeScale
            t.expectIgnored = topology.expectIgnored
            let folder = RunFolder(root: "\(scratch)/try-\(attempt)")
            guard let run = try? SimRun(topology: t, topologyText: candidate, folder: folder, replay: "", quiet: true)
            else { return false }
            try? run.run()
            let still = Self.fails(folder, target)
            try? FileManager.default.removeItem(atPath: folder.root)
            return still
        }
        var kept = items
        var chunk = max(1, kept.count / 2)
        while !kept.isEmpty {
            var start = 0
            var removedAny = false
            while start < kept.count {
                let candidate = Array(kept[..<start] + kept[min(kept.count, start + chunk)...])
                if fails(candidate) {
                    kept = candidate
                    removedAny = true
                    Output.stdout("  \(kept.count) left\n")
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removedAny { break }
            chunk = max(1, chunk / 2)
        }
        try? FileManager.default.removeItem(atPath: scratch)
        let minimal = "\(original.root)-minimal.json5"
        let header = "// shrunk by synclab sim --shrink from \(path), seed \(topology.seed): "
            + "\(kept.count) of \(items.count) steps and behaviours, \"\(target)\" still fails\n"
        _ = FileManager.default.createFile(atPath: minimal, contents: Data((header + Self.text(root, keeping: kept)).utf8))
        Output.stdout("minimal failing topology (\(kept.count) of \(items.count) steps and behaviours, after "
            + "\(attempt) runs): \(minimal)\nreplay: "
            + (["synclab", "sim", minimal, "--seed", String(topology.seed)] + passThrough).joined(separator: " ") + "\n")
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

    /// The topology with only the `kept` scenario steps and behaviours.
    static func text(_ root: JSONValue, keeping kept: [Item]) -> String {
        guard case .object(let pairs) = root else { return root.description }
        let out: [(String, JSONValue)] = pairs.map { key, value in
            guard key == "scenario" || key == "behaviours", let list = value.arrayValue else { return (key, value) }
            return (key, .array(list.indices.filter { kept.contains(Item(array: key, index: $0)) }.map { list[$0] }))
        }
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
