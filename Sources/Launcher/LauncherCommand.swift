import Foundation
import LabKit

/// `synclab`'s commands: run, check, report. Exit 0 when every invariant held, 1 when one failed, 2 for a bad command
/// line or topology.
public enum LauncherCommand {
    static let overview = """
        synclab — the SyncLab launcher: starts a topology of real processes (server, broker, devices), plays its
        scenario of user actions and faults, heals and quiesces, checks the sync invariants and writes a report.

        Usage:
          synclab run TOPOLOGY [--out DIR] [--seed N] [--time-scale X] [--nemesis KINDS] [--quiet]
          synclab check RUNDIR      re-check the invariants from a run folder's databases and events
          synclab report RUNDIR     rewrite a run folder's report.md, report.json and report.html
          synclab validate TOPOLOGY check a topology file without starting anything
          synclab explain RUNDIR KEY  the whole story of an op key, a hint id or a draft, from events.jsonl
          synclab compare RUN_A RUN_B two runs side by side: verdicts, invariants, every figure (and compare.html)
          synclab sim TOPOLOGY [--seed N] [--seeds A-B] [--shrink]   the same instances on a simulated clock
          synclab bench [--out DIR] [--quick] [--no-peers]   measure against this machine's floor, NATS and Redis
          synclab keys --out DIR NAME…   make a CURVE key pair per NAME (DIR/NAME.secret 0600, DIR/NAME.public)
          synclab COMMAND --help    the options of one command

        Exit status: 0 every invariant held, 1 an invariant failed, 2 the topology or the command line was wrong.
        Start with: synclab run topologies/quickstart.json5   (topology keys: docs/TOPOLOGY.md)

        """

    static let runSpec = CommandSpec(
        name: "synclab run", summary: "run a topology and check the sync invariants",
        usage: "synclab run TOPOLOGY [--out DIR] [--seed N] [--time-scale X] [--nemesis KINDS] [--quiet]",
        flags: [
            Flag("out", value: "DIR", help: "run folder (default: runs/NAME-YYYYMMDD-HHMMSS, with runs/latest)"),
            Flag("seed", value: "N", help: "override the topology's seed"),
            Flag("time-scale", value: "X",
                help: "override the topology's timeScale (simulated seconds per real second)"),
            Flag("quiet", help: "no progress line and no summary; only the exit status and the run folder's path"),
            Flag("ignore-expect", help: "judge the run as if the topology expected nothing to fail (a lesson's "
                + "broken half then fails the run)"),
            Flag("bin", value: "DIR",
                help: "where the synclab-* executables are (default: beside synclab, or $SYNCLAB_BIN)"),
            Flag("nemesis", value: "KINDS",
                 help: "add a standard seeded fault mix to the topology: comma-separated kinds among "
                    + Nemesis.Kind.allCases.map(\.rawValue).joined(separator: ",")
                    + " (docs/TOPOLOGY.md, \"nemesis\")"),
        ],
        footer: "The run folder holds topology.json5, events.jsonl, logs/, the SQLite files and report.{md,json,html}.")

    /// What `synclab check` and `synclab report` both take.
    static let folderFlags = [Flag("quiet", help: "print nothing; only the exit status"),
                              Flag("ignore-expect", help: "judge as if the topology expected nothing to fail")]

    static let folderSpec = CommandSpec(
        name: "synclab check", summary: "re-check the invariants of a run folder from its databases and events",
        usage: "synclab check RUNDIR [--ignore-expect]",
        flags: folderFlags,
        footer: "Writes nothing; `synclab report RUNDIR` rewrites the reports.")

    static let reportSpec = CommandSpec(
        name: "synclab report", summary: "rewrite a run folder's report.md, report.json and report.html",
        usage: "synclab report RUNDIR [--ignore-expect]",
        flags: folderFlags,
        footer: "Re-checks the invariants from the folder's databases and events, then writes the three reports\n"
            + "(report.html holds the timeline and the plots; docs/REPORT.md says how to read them).\n"
            + "Exit status: 0 every invariant held, 1 one failed, 2 not a run folder.")

    static let explainSpec = CommandSpec(
        name: "synclab explain", summary: "tell the whole story of one op, hint or draft of a run",
        usage: "synclab explain RUNDIR KEY", flags: [],
        footer: "KEY is an op's idempotency key (op.saved's \"key\"), a hint id (h-N; a restarted broker numbers its\n"
            + "hints again, so one id may tell several stories) or a draft id. Reads only RUNDIR/events.jsonl and "
                + "prints\n"
            + "one sentence per event, with simulated time. Exit 0, or 2 when KEY names nothing in the run.")

    static let compareSpec = CommandSpec(
        name: "synclab compare", summary: "two runs side by side",
        usage: "synclab compare RUN_A RUN_B [--out FILE]",
        flags: [Flag("out", value: "FILE", help: "the page to write (default: compare.html in the current folder)")],
        footer: "Prints both verdicts, each invariant and every figure of report.json (made from the folder when it\n"
            + "has none) with B − A; rows that differ are marked with *. Exit 0, or 2 when a folder is not a run.")

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
        case "explain":
            return explain(rest)
        case "compare":
            return compare(rest)
        case "validate":
            return validate(rest)
        case "keys":
            return RunKeys.command(rest)
        case "sim":
            return SimCommand.run(rest)
        default:
            Output.stderr("synclab: unknown command \"\(command)\"\n\n" + overview)
            return 2
        }
    }

    /// The one topology file `synclab run` and `synclab sim` play, with the overrides they share (`--seed`,
    /// `--time-scale`, `--ignore-expect`; `--nemesis` for a run), and its text as written; nil after writing what was
    /// wrong, the command's name before a usage error and `errorPrefix` before a bad file or option.
    static func topology(_ options: ParsedOptions, command: String, errorPrefix: String, help: String)
        -> (path: String, topology: Topology, text: String)?
    {
        guard let path = options.positionals(1, orSay: "\(command): expected one topology file, got "
            + "\(options.positional.count)", help: help)?.first else { return nil }
        do {
            var topology = try Topology.load(path: path)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            if let seed = try options.int("seed") {
                guard seed >= 0 else { throw LabError.usage("--seed must not be negative") }
                topology.seed = UInt64(seed)
            }
            if options.has("ignore-expect") { topology.expectIgnored = true }
            if let scale = try options.double("time-scale") {
                guard scale > 0 else { throw LabError.usage("--time-scale must be more than 0") }
                topology.timeScale = scale
            }
            if let kinds = options.string("nemesis") { try topology.addStandardNemesis(kinds) }
            return (path, topology, text)
        } catch {
            Output.stderr("\(errorPrefix): \(error)\n")
            return nil
        }
    }

    static func run(_ arguments: [String]) -> Int32 {
        let options = runSpec.parseOrExit(arguments)
        guard case let (_, topology, text)? = Self.topology(options, command: "synclab run", errorPrefix: "synclab",
                                                            help: runSpec.help) else { return 2 }
        let folder = options.string("out").map { RunFolder(root: $0) }
            ?? RunFolder.timestamped(base: "runs", name: topology.name)
        if FileManager.default.fileExists(atPath: folder.path("events.jsonl")) {
            Output.stderr("synclab: \(folder.root) already holds a run; choose another --out\n")
            return 2
        }
        let quiet = options.has("quiet")
        let bin = options.string("bin") ?? ProcessInfo.processInfo.environment["SYNCLAB_BIN"] ?? executableDirectory()
        guard let run = orSay({ "synclab: \($0)" }, {
            try LabRun(topology: topology, topologyText: text, folder: folder, binDirectory: bin, quiet: quiet)
        }) else { return 2 }
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
        let spec = rewrite ? reportSpec : folderSpec
        let options = spec.parseOrExit(arguments)
        guard let root = options.positionals(1, orSay: "synclab: expected one run folder", help: spec.help)?.first
        else { return 2 }
        guard let report = orSay({ "synclab: \($0)" }, {
            try Report.make(folder: RunFolder(root: root), ignoreExpect: options.has("ignore-expect"))
        }) else { return 2 }
        if rewrite { report.write() }
        if !options.has("quiet") { Output.stdout(report.summary) }
        return report.passed ? 0 : 1
    }

    static func explain(_ arguments: [String]) -> Int32 {
        let options = explainSpec.parseOrExit(arguments)
        guard let pair = options.positionals(2, orSay: "synclab explain: expected a run folder and a key",
                                            help: explainSpec.help) else { return 2 }
        let (root, key) = (pair[0], pair[1])
        guard let events = orSay({ "synclab explain: \(root) is not a run folder: \($0)" }, {
            try RunData.readEvents(RunFolder(root: root).path("events.jsonl"))
        }) else { return 2 }
        let explain = Explain(events: events)
        guard let subject = explain.subject(of: key) else {
            Output.stderr("synclab explain: \(root)/events.jsonl names no op key, hint id or draft \"\(key)\"\n")
            return 2
        }
        Output.stdout(explain.story(subject).map(\.rendered).joined(separator: "\n") + "\n")
        return 0
    }

    static func compare(_ arguments: [String]) -> Int32 {
        let options = compareSpec.parseOrExit(arguments)
        guard let pair = options.positionals(2, orSay: "synclab compare: expected two run folders",
                                            help: compareSpec.help) else { return 2 }
        let (a, b) = (pair[0], pair[1])
        guard var compare = orSay({ "synclab compare: \($0)" }, {
            Compare(nameA: a, a: try Compare.reportJSON(folder: a), nameB: b, b: try Compare.reportJSON(folder: b))
        }) else { return 2 }
        compare.timelines = Compare.timelines(folderA: a, folderB: b)
        let out = options.string("out") ?? "compare.html"
        guard FileManager.default.createFile(atPath: out, contents: Data(compare.html.utf8)) else {
            Output.stderr("synclab compare: cannot write \(out)\n")
            return 2
        }
        Output.stdout(compare.table + "page: \(out)\n")
        return 0
    }

    static func validate(_ arguments: [String]) -> Int32 {
        let spec = CommandSpec(name: "synclab validate", summary: "check topology files",
            usage: "synclab validate FILE…",
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
                Output.stdout("\(path): ok — \(t.devices.count) devices, \(t.timeline().count) steps over "
                    + "\(formatSim(t.duration))\n")
                if t.nemesis != nil {
                    let schedule = t.nemesisSchedule()
                    let kinds = schedule.counts.map { kind in
                        let targets = kind.byTarget.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
                        return "\(kind.kind) \(kind.total) (\(targets))"
                    }
                    Output.stdout("  nemesis: \(schedule.faults.count) faults, \(schedule.skipped) skipped by limits; "
                        + kinds.joined(separator: "; ") + "\n")
                }
            } catch {
                Output.stderr("\(error)\n")
                status = 2
            }
        }
        return status
    }

    /// The folder of the running executable, where SwiftPM puts the other products too.
    package static func executableDirectory() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return (path as NSString).deletingLastPathComponent
    }
}
