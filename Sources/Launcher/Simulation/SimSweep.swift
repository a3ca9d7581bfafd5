import Foundation
import LabKit
import Simulation
import SyncProtocol

/// `synclab sim TOPOLOGY --seeds A-B`: one simulated run per seed, `jobs` at a time, each a child process of this
/// executable (so runs share nothing, and both cores work); a line per failing seed with its replay command, then a
/// summary. With `--shrink`, the first failing seed is shrunk in this process.
struct SimSweep {
    let path: String
    let seeds: ClosedRange<UInt64>
    let jobs: Int
    let passThrough: [String]
    let out: String
    let shrink: Bool
    /// `--storage` for every run (nil: each run's `auto`); not part of a replay, since it does not change the bytes.
    var storage: SimStorage? = nil

    struct Outcome {
        let seed: UInt64
        let status: Int32
        let failed: [String]
    }

    func run() -> Int32 {
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            Output.stderr("synclab sim: cannot create \(out): \(error)\n")
            return 2
        }
        let executable = LauncherCommand.executableDirectory() + "/synclab"
        var pending = Array(seeds)
        var running: [(seed: UInt64, process: Process)] = []
        var outcomes: [Outcome] = []
        while !pending.isEmpty || !running.isEmpty {
            while running.count < jobs, !pending.isEmpty {
                let seed = pending.removeFirst()
                let process = Process()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = ["sim", path, "--seed", String(seed), "--out", folder(seed), "--quiet"]
                    + passThrough + (storage.map { ["--storage", $0.rawValue] } ?? [])
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                do {
                    try process.run()
                    running.append((seed, process))
                } catch {
                    Output.stderr("synclab sim: cannot start \(executable): \(error)\n")
                    return 2
                }
            }
            usleep(5_000)
            running.removeAll { item in
                guard !item.process.isRunning else { return false }
                let outcome = Outcome(seed: item.seed, status: item.process.terminationStatus,
                                      failed: failedChecks(folder(item.seed)))
                outcomes.append(outcome)
                if outcome.status != 0 { Output.stdout(line(outcome)) }
                return true
            }
        }
        outcomes.sort { $0.seed < $1.seed }
        let failing = outcomes.filter { $0.status != 0 }
        var summary = "\(failing.count) of \(outcomes.count) seeds failed "
            + "(seeds \(seeds.lowerBound)-\(seeds.upperBound))"
        if !failing.isEmpty {
            var byCheck: [String: Int] = [:]
            for outcome in failing { for check in outcome.failed { byCheck[check, default: 0] += 1 } }
            summary += ": " + byCheck.keys.sorted().map { "\($0) on \(byCheck[$0]!)" }.joined(separator: ", ")
        }
        Output.stdout(summary + "\nruns: \(out)\n")
        if shrink, let first = failing.first {
            do {
                var topology = try Topology.load(path: path)
                topology.seed = first.seed
                if passThrough.contains("--ignore-expect") { topology.expectIgnored = true }
                if let index = passThrough.firstIndex(of: "--time-scale"), let scale = Double(passThrough[index + 1]) {
                    topology.timeScale = scale
                }
                let text = try String(contentsOfFile: path, encoding: .utf8)
                _ = SimShrink(path: path, topology: topology, text: text, passThrough: passThrough,
                              original: RunFolder(root: folder(first.seed))).run()
            } catch {
                Output.stderr("synclab sim: cannot shrink: \(error)\n")
            }
        }
        if outcomes.contains(where: { $0.status == 2 }) { return 2 }
        return failing.isEmpty ? 0 : 1
    }

    func folder(_ seed: UInt64) -> String { "\(out)/seed-\(seed)" }

    func line(_ outcome: Outcome) -> String {
        let what = outcome.status == 2 ? "could not run" : "FAIL"
        let checks = outcome.failed.isEmpty ? "" : " (\(outcome.failed.joined(separator: ", ")))"
        return "seed \(outcome.seed): \(what)\(checks) — replay: "
            + (["synclab", "sim", path, "--seed", String(outcome.seed)] + passThrough).joined(separator: " ") + "\n"
    }

    /// The checks that did not hold in a run folder's report.json, or `expectation` when only the expectation failed.
    func failedChecks(_ root: String) -> [String] {
        guard let text = try? String(contentsOfFile: "\(root)/report.json", encoding: .utf8),
              let report = try? JSONValue.parse(text)
        else { return [] }
        let items = (report["invariants"]?.arrayValue ?? []) + (report["checks"]?.arrayValue ?? [])
        let failed = items.filter { $0["held"]?.boolValue == false }.compactMap { $0["name"]?.stringValue }
        if failed.isEmpty && report["expectation"]?["met"]?.boolValue == false { return ["expectation"] }
        return failed
    }
}
