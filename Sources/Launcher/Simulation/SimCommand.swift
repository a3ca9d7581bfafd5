import Foundation
import LabKit
import Simulation
import SyncProtocol

/// `synclab sim`: a topology on the simulated machine (docs/SIMULATION.md). One seed writes a run folder and its
/// report, as `synclab run` does; `--seeds A-B` sweeps many seeds in child processes (two at a time) and prints the
/// failing ones with the command that replays each; `--shrink` reduces a failing run's scenario and behaviours.
enum SimCommand {
    static let spec = CommandSpec(
        name: "synclab sim",
        summary: "play a topology with every process as its instance in one process, on a simulated network and clock",
        usage: "synclab sim TOPOLOGY [--seed N] [--out DIR] [--storage files|memory|auto] | --seeds A-B [--jobs N] "
            + "[--shrink] "
            + "[--ignore-expect]",
        flags: [
            Flag("seed", value: "N", help: "override the topology's seed: the same seed gives the same bytes"),
            Flag("out", value: "DIR", help: "run folder (default: runs/NAME-sim-YYYYMMDD-HHMMSS); with --seeds, the "
                + "folder of the sweep's runs"),
            Flag("seeds", value: "A-B",
                 help: "sweep seeds A to B (e.g. 1-100): one line per failing seed and a summary"),
            Flag("jobs", value: "N", default: "2", help: "runs at once in a sweep (child processes)"),
            Flag("shrink", help: "with --seeds (its first failing seed) or --seed: expand the behaviours into steps, "
                + "drop steps while the same check still fails, and write the minimal failing topology"),
            Flag("crash-anywhere", value: "N",
                 help: "(default 0) kill N times, each a device or the server (drawn from the seed) at a directive, "
                     + "commit, "
                    + "send or reply boundary of its own; each restarts a second later"),
            Flag("time-scale", value: "X", help: "override the topology's timeScale"),
            Flag("ignore-expect", help: "judge as if the topology expected nothing to fail"),
            Flag("quiet", help: "no progress and no summary; only the exit status and the run folder's path"),
            Flag("storage", value: "files|memory|auto", default: "auto",
                 help: "where the SQLite databases live during the run: files in the run folder, or memory (written "
                    + "to the same files at the end; for many devices: no descriptors, no kernel); auto: files up to "
                    + "\(SimStorage.filesUpTo) devices, memory above. The bytes of events.jsonl and report.json do not "
                    + "depend on it"),
        ],
        footer: """
            The run folder is the one `synclab run` writes (events.jsonl with virtual wall µs, the SQLite files,
            report.{md,json,html}); the report says it is a simulation and prints the command that replays it.
            Exit status: 0 the verdict is pass (a sweep: every seed passed), 1 a failure, 2 a bad command line or
            topology.
            """)

    static func run(_ arguments: [String]) -> Int32 {
        let options = spec.parseOrExit(arguments)
        guard case let (path, topology, text)? = LauncherCommand.topology(options, command: "synclab sim",
                                                                          errorPrefix: "synclab sim", help: spec.help)
        else { return 2 }
        // The simulation runs the lab's own device instances: judging them in place of a program would be a verdict
        // on code the topology did not name.
        if let outside = topology.devices.first(where: { $0.program != nil }) {
            Output.stderr("synclab sim: \(path): device \"\(outside.id)\" is an outside device (program); the "
                + "simulation cannot run a program: use synclab run (docs/DEVICE-CONTRACT.md)\n")
            return 2
        }
        let storage: SimStorage?
        switch options.string("storage") ?? "auto" {
        case "auto": storage = nil
        case let name:
            guard let chosen = SimStorage(rawValue: name) else {
                Output.stderr("synclab sim: --storage must be files, memory or auto, got \"\(name)\"\n")
                return 2
            }
            storage = chosen
        }
        if let range = options.string("seeds") {
            guard let seeds = parseSeeds(range) else {
                Output.stderr("synclab sim: --seeds must be A-B with 0 ≤ A ≤ B, got \"\(range)\"\n")
                return 2
            }
            guard let jobs = options.count("jobs", default: 2, atLeast: 1, command: "synclab sim") else { return 2 }
            let out = options.string("out")
                ?? RunFolder.timestamped(base: "runs", name: "\(topology.name)-sweep").root
            return SimSweep(path: path, seeds: seeds, jobs: jobs, passThrough: passThrough(options), out: out,
                            shrink: options.has("shrink"), storage: storage).run()
        }
        let folder = options.string("out").map { RunFolder(root: $0) }
            ?? RunFolder.timestamped(base: "runs", name: "\(topology.name)-sim")
        if FileManager.default.fileExists(atPath: folder.path("events.jsonl")) {
            Output.stderr("synclab sim: \(folder.root) already holds a run; choose another --out\n")
            return 2
        }
        let quiet = options.has("quiet")
        let replay = (["synclab", "sim", path, "--seed", String(topology.seed)] + passThrough(options))
            .joined(separator: " ")
        guard let kills = options.count("crash-anywhere", default: 0, atLeast: 0, command: "synclab sim") else {
            return 2
        }
        let status = simulate(topology: topology, text: text, folder: folder, replay: replay, quiet: quiet,
                              storage: storage, crashAnywhere: kills)
        if options.has("shrink") {
            guard status == 1 else {
                if status == 0 { Output.stdout("nothing to shrink: seed \(topology.seed) passes\n") }
                return status
            }
            return SimShrink(path: path, topology: topology, text: text, passThrough: passThrough(options),
                             original: folder).run()
        }
        return status
    }

    /// Flags a replay must repeat (beside the topology and the seed).
    static func passThrough(_ options: ParsedOptions) -> [String] {
        var flags: [String] = []
        if let scale = options.string("time-scale") { flags += ["--time-scale", scale] }
        if options.has("ignore-expect") { flags.append("--ignore-expect") }
        if let kills = options.string("crash-anywhere") { flags += ["--crash-anywhere", kills] }
        return flags
    }

    /// Plays the topology into `folder` and writes its report; the exit status of `synclab run`.
    /// The `--crash-anywhere` count among flags a replay repeats (0 without one).
    static func crashAnywhere(in passThrough: [String]) -> Int {
        guard let index = passThrough.firstIndex(of: "--crash-anywhere"), index
            + 1 < passThrough.count else { return 0 }
        return Int(passThrough[index + 1]) ?? 0
    }

    static func simulate(topology: Topology, text: String, folder: RunFolder, replay: String, quiet: Bool,
                         storage: SimStorage? = nil, crashAnywhere: Int = 0) -> Int32
    {
        let run: SimRun
        do {
            run = try SimRun(topology: topology, topologyText: text, folder: folder, replay: replay, quiet: quiet,
                             storage: storage, crashAnywhere: crashAnywhere)
        } catch {
            Output.stderr("synclab sim: \(error)\n")
            return 2
        }
        if !quiet { Output.stderr("synclab sim: \(topology.name) seed \(topology.seed) → \(folder.root)\n") }
        do {
            try run.run()
        } catch {
            Output.stderr("synclab sim: the run stopped: \(error)\n")
            var limit = rlimit()
            if run.storage == .files, getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0,
               topology.devices.count * 3 + 64 > Int(limit.rlim_cur)
            {
                Output.stderr("synclab sim: each simulated device holds three files open (its ledger, -wal, -shm): "
                    + "\(topology.devices.count) devices need more than this process's limit of \(limit.rlim_cur) "
                    + "(ulimit -n); --storage memory keeps them in memory\n")
            }
            return LauncherCommand.report(folder: folder, quiet: quiet, ranToEnd: false)
        }
        return LauncherCommand.report(folder: folder, quiet: quiet, ranToEnd: true)
    }

    static func parseSeeds(_ text: String) -> ClosedRange<UInt64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 1, let one = UInt64(parts[0]) { return one...one }
        guard parts.count == 2, let low = UInt64(parts[0]), let high = UInt64(parts[1]), low <= high else { return nil }
        return low...high
    }
}
