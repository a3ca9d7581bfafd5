import Foundation
import LabTestSupport
import SyncProtocol
import Testing

/// Real runs: the `synclab` executable starts real server, broker and device processes over real sockets, plays a
/// shipped topology, and the verdict and figures of its report.json are asserted.
@Suite(.serialized) struct EndToEndTests {
    struct Run: Sendable {
        let status: Int32
        let report: JSONValue
        let output: String
        /// The temporary folder holding the run folder (and the topology, when the test wrote one).
        let home: TempFolder
        var folder: String { home.file("run") }

        func invariant(_ name: String) -> (held: Bool, detail: String) {
            let item = report["invariants"]?.arrayValue?.first { $0["name"]?.stringValue == name }
            return (item?["held"]?.boolValue ?? false, item?["detail"]?.stringValue ?? "missing")
        }

        var failedInvariants: String {
            (report["invariants"]?.arrayValue ?? []).filter { $0["held"]?.boolValue != true }
                .map { "\($0["name"]?.stringValue ?? "?"): \($0["detail"]?.stringValue ?? "")" }.joined(separator: "; ")
        }

        /// The run exited 0 and its report's verdict is `pass`; a failure shows the failed invariants and the output.
        func expectPassed(sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(status == 0, "\(failedInvariants)\n\(output)", sourceLocation: sourceLocation)
            #expect(report["verdict"]?.stringValue == "pass", sourceLocation: sourceLocation)
        }
    }

    /// The folder of the built executables (what `synclab run --bin` takes).
    static var binDirectory: String { get throws { try Binaries.folder(holding: "synclab") } }

    static var topologies: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../topologies")
    }

    /// Runs the `synclab` executable with `arguments`, stopped (SIGINT, then SIGKILL) if it is still running after
    /// `limit` seconds: its status and everything it wrote.
    static func synclab(_ arguments: [String], limit: Double) throws -> (status: Int32, output: String) {
        try ChildProcess.run(Binaries.path("synclab"), arguments, limit: limit, stop: SIGINT)
    }

    /// Runs `synclab run` on a shipped topology into a fresh folder, with a hard time limit.
    static func run(_ topology: String, in home: TempFolder = TempFolder(), extra: [String] = [], limit: Double = 120)
        throws -> Run
    {
        try run(file: topologies.appendingPathComponent("\(topology).json5").path, in: home, extra: extra, limit: limit)
    }

    /// Runs `synclab run` on the topology file `path` into `home`'s `run` folder, with a hard time limit.
    static func run(file path: String, in home: TempFolder = TempFolder(), extra: [String] = [], limit: Double = 120)
        throws -> Run
    {
        let (status, output) = try synclab(["run", path, "--out", home.file("run"), "--bin", binDirectory] + extra,
                                           limit: limit)
        let report = (try? JSONValue.parse(home.text("run/report.json"))) ?? .null
        return Run(status: status, report: report, output: output, home: home)
    }

    /// The command lines of every process on the machine.
    static func processCommandLines() -> [String] {
        let ps = (try? ChildProcess.run("/bin/ps", ["-eo", "args"]))?.output ?? ""
        return ps.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("/bin/ps") }
    }

    /// No process of the run may outlive it.
    static func expectNoneLeft(_ run: Run) {
        let ours = processCommandLines().filter { $0.contains(run.folder) }
        #expect(ours.isEmpty, "left behind: \(ours)")
    }

    @Test func quickstartPassesAndAnEditTravels() throws {
        let run = try Self.run("quickstart")
        defer { Self.expectNoneLeft(run) }
        run.expectPassed()
        #expect(run.report["seed"]?.intValue == 7)
        #expect(run.report["ops"]?["saved"]?.intValue == 4)
        #expect(run.report["ops"]?["applied"]?.intValue == 4)
        // Edits reached the other devices of the account: 4 edits × 2 other devices.
        #expect(run.report["propagation"]?["count"]?.intValue == 8)
        #expect((run.report["hints"]?["accepted"]?.intValue ?? 0) > 0)
        #expect((run.report["passes"]?["total"]?.intValue ?? 0) > 0)
        #expect(run.report["platforms"]?.arrayValue?.count == 3)
        for name in ["events.jsonl", "report.md", "report.html", "logs/server.log", "server.sqlite",
            "devices/pixel.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: "\(run.folder)/\(name)"), "\(name)")
        }
        #expect(run.output.contains("PASS"))
        // Every line the real processes wrote has a catalogue type with the catalogue's field kinds.
        let problems = EventConformance.problems(in: (try? String(contentsOfFile: "\(run.folder)/events.jsonl",
                                                                  encoding: .utf8)) ?? "")
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func hintLossIsRepairedByTheCursor() throws {
        let run = try Self.run("hint-loss")
        defer { Self.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        let hints = run.report["hints"]
        let dropped = hints?["dropped"]?.intValue ?? 0
        let accepted = hints?["accepted"]?.intValue ?? 0
        #expect(accepted > 20)
        // About half were lost on purpose, and the run still converged.
        #expect(Double(dropped) > Double(accepted) * 0.3, "dropped \(dropped) of \(accepted)")
        #expect(run.invariant("convergence").held)
        #expect((run.report["passes"]?["byTrigger"]?["foreground"]?.intValue ?? 0) > 0)
    }

    @Test func duplicatePushesApplyNothingTwice() throws {
        let run = try Self.run("duplicate-push")
        defer { Self.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        let duplicated = run.report["hints"]?["duplicated"]?.intValue ?? 0
        #expect(duplicated > 5)
        #expect(run.invariant("exactly-once").held)
        #expect(run.report["ops"]?["saved"]?.intValue == run.report["ops"]?["applied"]?.intValue)
    }

    @Test func crashesOfEveryProcessLoseNothing() throws {
        let run = try Self.run("crash", limit: 180)
        defer { Self.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        #expect(run.invariant("no-lost-edit").held)
        #expect(run.invariant("exactly-once").held)
        let events = (try? String(contentsOfFile: "\(run.folder)/events.jsonl", encoding: .utf8)) ?? ""
        // Three kill steps and two crash points (crash.json5).
        #expect(events.components(separatedBy: "\"type\":\"process.killed\"").count - 1 == 5)
        #expect(events.components(separatedBy: "\"type\":\"process.restarted\"").count - 1 >= 4)
        let problems = EventConformance.problems(in: events)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aBrokenTopologyExitsTwoAndStartsNothing() throws {
        let folder = TempFolder()
        let file = folder.file("broken.json5")
        try "{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"nokia\" }] }] }".write(toFile: file,
            atomically: true, encoding: .utf8)
        let (status, output) = try Self.synclab(["run", file, "--out", folder.file("run")], limit: 30)
        #expect(status == 2)
        #expect(output.contains("\(file):1: accounts[0].devices[0].platform"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("run")))
    }

    /// The processes whose command line names `folder`.
    static func processes(naming folder: String) -> [String] {
        processCommandLines().filter { $0.contains(folder) }
    }

    /// Starts quickstart, waits until the launcher and its five processes run, then sends the launcher `signal`: how
    /// the launcher ended, the processes of the run still there after it, and the run's folder.
    static func interrupt(with signal: Int32) throws
        -> (end: ChildProcess.Termination?, left: [String], home: TempFolder)
    {
        let home = TempFolder()
        let out = home.file("run")
        let launcher = try ChildProcess(Binaries.path("synclab"), [
            "run", topologies.appendingPathComponent("quickstart.json5").path, "--out", out, "--bin", binDirectory,
            "--quiet",
        ], stdout: nil, stderr: nil)
        let deadline = Date().addingTimeInterval(30)
        while processes(naming: out).count < 6 && Date() < deadline { usleep(100_000) }
        #expect(processes(naming: out).count == 6, "the launcher and its five processes")
        launcher.signal(signal)
        launcher.wait(timeout: 120)
        var left = processes(naming: out)
        let settle = Date().addingTimeInterval(5)
        while !left.isEmpty && Date() < settle {
            usleep(100_000)
            left = processes(naming: out)
        }
        return (launcher.termination, left, home)
    }

    @Test func ctrlCStopsEveryProcess() throws {
        let result = try Self.interrupt(with: SIGINT)
        #expect(result.end == .exited(130))
        #expect(result.left.isEmpty, "left behind: \(result.left)")
        // The report covers what ran, marked as interrupted, and never passes.
        let report = try JSONValue.parse(try String(contentsOfFile: result.home.file("run/report.json"),
            encoding: .utf8))
        #expect(report["verdict"]?.stringValue == "fail")
        #expect(report["interruptedIn"]?.stringValue != nil)
    }

    @Test func aKilledLauncherTakesItsProcessesWithIt() throws {
        let result = try Self.interrupt(with: SIGKILL)
        #expect(result.end == .signaled(SIGKILL))
        #expect(result.left.isEmpty, "left behind: \(result.left)")
    }
}
