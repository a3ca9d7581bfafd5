import Foundation
import LabKit

/// `synclab`'s commands: run, check, report. Exit 0 when every invariant held, 1 when one failed, 2 for a bad command
/// line or topology.
public enum LauncherCommand {
    static let overview = """
        synclab — the SyncLab launcher: starts a topology of real processes (server, broker, devices), plays its
        scenario of user actions and faults, heals and quiesces, checks the sync invariants and writes a report.

        Usage:
          synclab run TOPOLOGY [--out DIR] [--seed N] [--time-scale X] [--quiet]
          synclab check RUNDIR      re-check the invariants from a run folder's databases and events
          synclab report RUNDIR     rewrite a run folder's report.md, report.json and report.html
          synclab validate TOPOLOGY check a topology file without starting anything
          synclab sim TOPOLOGY [--seed N] [--seeds A-B] [--shrink]   the same instances on a simulated clock
          synclab bench [--out DIR] [--quick]   measure speed and memory against this machine's floor
          synclab COMMAND --help    the options of one command

        Exit status: 0 every invariant held, 1 an invariant failed, 2 the topology or the command line was wrong.
        Start with: synclab run topologies/quickstart.json5   (topology keys: docs/TOPOLOGY.md)

        """

    static let runSpec = CommandSpec(
        name: "synclab run", summary: "run a topology and check the sync invariants",
        usage: "synclab run TOPOLOGY [--out DIR] [--seed N] [--time-scale X] [--quiet]",
        flags: [
            Flag("out", value: "DIR", help: "run folder (default: runs/NAME-YYYYMMDD-HHMMSS, with runs/latest)"),
            Flag("seed", value: "N", help: "override the topology's seed"),
            Flag("time-scale", value: "X", help: "override the topology's timeScale (simulated seconds per real second)"),
            Flag("quiet", help: "no progress line and no summary; only the exit status and the run folder's path"),
            Flag("ignore-expect", help: "judge the run as if the topology expected nothing to fail (a lesson's "
                + "broken half then fails the run)"),
            Flag("bin", value: "DIR", help: "where the synclab-* executables are (default: beside synclab, or $SYNCLAB_BIN)"),
        ],
        footer: "The run folder holds topology.json5, events.jsonl, logs/, the SQLite files and report.{md,json,html}.")

    static let folderSpec = CommandSpec(
        name: "synclab check|report", summary: "re-check or re-report a run folder", usage: "synclab check RUNDIR",
        flags: [Flag("quiet", help: "print nothing; only the exit status"),
                Flag("ignore-expect", help: "judge as if the topology expected nothing to fail")])

    public static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            Output.stderr(overview)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help":
            Output.stdout(overview)
            return 0
        case "run":
            return run(rest)
        case "check", "report":
            return recheck(rest, rewrite: command == "report")
        case "validate":
            return validate(rest)
        case "bench":
            return bench(rest)
        case "sim":
            return SimCommand.run(rest)
        default:
            Output.stderr("synclab: unknown command \"\(command)\"\n\n" + overview)
            return 2
        }
    }

    static func run(_ arguments: [String]) -> Int32 {
        let options = runSpec.parseOrExit(arguments)
        guard options.positional.count == 1, let path = options.positional.first else {
            Output.stderr("synclab run: expected one topology file, got \(options.positional.count)\n\n" + runSpec.help)
            return 2
        }
        var topology: Topology
        let text: String
        do {
            topology = try Topology.load(path: path)
            text = try String(contentsOfFile: path, encoding: .utf8)
            if let seed = try options.int("seed") {
                guard seed >= 0 else { throw LabError.usage("--seed must not be negative") }
                topology.seed = UInt64(seed)
            }
            if options.has("ignore-expect") { topology.expectIgnored = true }
            if let scale = try options.double("time-scale") {
                guard scale > 0 else { throw LabError.usage("--time-scale must be more than 0") }
                topology.timeScale = scale
            }
        } catch {
            Output.stderr("synclab: \(error)\n")
            return 2
        }
        let folder = options.string("out").map { RunFolder(root: $0) }
            ?? RunFolder.timestamped(base: "runs", name: topology.name)
        if FileManager.default.fileExists(atPath: folder.path("events.jsonl")) {
            Output.stderr("synclab: \(folder.root) already holds a run; choose another --out\n")
            return 2
        }
        let quiet = options.has("quiet")
        let bin = options.string("bin") ?? ProcessInfo.processInfo.environment["SYNCLAB_BIN"] ?? executableDirectory()
        let run: LabRun
        do {
            run = try LabRun(topology: topology, topologyText: text, folder: folder, binDirectory: bin, quiet: quiet)
        } catch {
            Output.stderr("synclab: \(error)\n")
            return 2
        }
        if !quiet { Output.stderr("synclab: \(topology.name) → \(folder.root)\n") }
        var failure: Error?
        do {
            try run.run()
        } catch {
            failure = error
        }
        if let failure {
            Output.stderr("synclab: the run stopped: \(failure)\n")
            if Signals.stopRequested {
                // Interrupted: the processes are stopped; the report covers what ran, marked as interrupted.
                _ = report(folder: folder, quiet: quiet, ranToEnd: false)
                return 130
            }
        }
        return report(folder: folder, quiet: quiet, ranToEnd: failure == nil)
    }

    static func report(folder: RunFolder, quiet: Bool, ranToEnd: Bool) -> Int32 {
        do {
            let report = try Report.make(folder: folder)
            report.write()
            if !quiet { Output.stdout(report.summary) } else { Output.stdout(folder.root + "\n") }
            return report.passed && ranToEnd ? 0 : 1
        } catch {
            Output.stderr("synclab: cannot check \(folder.root): \(error)\n")
            return 2
        }
    }

    static func recheck(_ arguments: [String], rewrite: Bool) -> Int32 {
        let options = folderSpec.parseOrExit(arguments)
        guard options.positional.count == 1, let root = options.positional.first else {
            Output.stderr("synclab: expected one run folder\n\n" + folderSpec.help)
            return 2
        }
        do {
            let report = try Report.make(folder: RunFolder(root: root), ignoreExpect: options.has("ignore-expect"))
            if rewrite { report.write() }
            if !options.has("quiet") { Output.stdout(report.summary) }
            return report.passed ? 0 : 1
        } catch {
            Output.stderr("synclab: \(error)\n")
            return 2
        }
    }

    static func validate(_ arguments: [String]) -> Int32 {
        let spec = CommandSpec(name: "synclab validate", summary: "check topology files", usage: "synclab validate FILE…",
                               flags: [])
        let options = spec.parseOrExit(arguments)
        guard !options.positional.isEmpty else {
            Output.stderr("synclab validate: expected at least one topology file\n")
            return 2
        }
        var status: Int32 = 0
        for path in options.positional {
            do {
                let t = try Topology.load(path: path)
                Output.stdout("\(path): ok — \(t.devices.count) devices, \(t.timeline().count) steps over \(formatSim(t.duration))\n")
            } catch {
                Output.stderr("\(error)\n")
                status = 2
            }
        }
        return status
    }

    static let benchSpec = CommandSpec(
        name: "synclab bench", summary: "measure the lab against this machine's own floor",
        usage: "synclab bench [--out DIR] [--quick]",
        flags: [
            Flag("out", value: "DIR", help: "where bench.json and the runs it made go (default: runs/bench-YYYYMMDD-HHMMSS)"),
            Flag("quick", help: "fewer samples and 20 devices instead of 100: a sanity run of every figure"),
            Flag("simulation", help: "only the simulation's figures (synclab sim: seven-days wall time, device-days/s, "
                + "memory per simulated device)"),
            Flag("bin", value: "DIR", help: "where the synclab-* executables are (default: beside synclab, or $SYNCLAB_BIN)"),
        ],
        footer: "Figures: floor (zmq round trip hot and from idle, SQLite commit normal and full, push-path floor),\n"
            + "propagation with 3 and 100 devices (100 processes, and one pool), server ops/s and pulled changes/s,\n"
            + "broker hints/s beside a raw fan-out, resident memory, the simulation's speed and memory per device.\n"
            + "The server and broker write events, as in a run.\n"
            + "Targets are printed as met or missed with the ratio; docs/PERFORMANCE.md says where the time goes.")

    static func bench(_ arguments: [String]) -> Int32 {
        let options = benchSpec.parseOrExit(arguments)
        guard options.positional.isEmpty else {
            Output.stderr("synclab bench: unexpected argument \(options.positional[0])\n")
            return 2
        }
        let out = options.string("out") ?? RunFolder.timestamped(base: "runs", name: "bench").root
        let bin = options.string("bin") ?? ProcessInfo.processInfo.environment["SYNCLAB_BIN"] ?? executableDirectory()
        var bench = Bench(out: out, bin: bin, quick: options.has("quick"))
        do {
            if options.has("simulation") {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                bench.section("simulation: seven-days, device-days per second, memory per device") {
                    try $0.measureSimulation()
                }
            } else {
                try bench.run()
            }
        } catch {
            bench.failures.append("floor: \(error)")
        }
        let path = "\(out)/bench.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data((bench.json.description + "\n").utf8))
        Output.stdout((options.has("simulation") ? bench.simulationTable : bench.table) + "bench.json: \(path)\n")
        for failure in bench.failures { Output.stderr("synclab bench: not measured: \(failure)\n") }
        return bench.failures.isEmpty ? 0 : 1
    }

    /// The folder of the running executable, where SwiftPM puts the other products too.
    static func executableDirectory() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (path as NSString).deletingLastPathComponent
    }
}
