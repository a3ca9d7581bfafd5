import Foundation
import SyncProtocol
import Testing

/// Real runs: the `synclab` executable starts real server, broker and device processes over real sockets, plays a
/// shipped topology, and the verdict and figures of its report.json are asserted.
@Suite(.serialized) struct EndToEndTests {
    struct Run {
        let status: Int32
        let report: JSONValue
        let folder: String
        let output: String

        func invariant(_ name: String) -> (held: Bool, detail: String) {
            let item = report["invariants"]?.arrayValue?.first { $0["name"]?.stringValue == name }
            return (item?["held"]?.boolValue ?? false, item?["detail"]?.stringValue ?? "missing")
        }

        var failedInvariants: String {
            (report["invariants"]?.arrayValue ?? []).filter { $0["held"]?.boolValue != true }
                .map { "\($0["name"]?.stringValue ?? "?"): \($0["detail"]?.stringValue ?? "")" }.joined(separator: "; ")
        }
    }

    static var binDirectory: String {
        if let bin = ProcessInfo.processInfo.environment["SYNCLAB_BIN"] { return bin }
        // The test bundle sits beside the products in .build/<triple>/debug.
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("synclab").path) { return url.path }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug").path
    }

    static var topologies: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../topologies")
    }

    /// Runs `synclab run` on a shipped topology into a fresh folder, with a hard time limit.
    static func run(_ topology: String, extra: [String] = [], limit: Double = 120) throws -> Run {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("synclab-e2e-\(UUID().uuidString)").path
        let (status, output) = try OutputFile.runSynclab(
            ["run", topologies.appendingPathComponent("\(topology).json5").path, "--out", out, "--bin", binDirectory] + extra,
            limit: limit)
        let text = (try? String(contentsOfFile: "\(out)/report.json", encoding: .utf8)) ?? "{}"
        return Run(status: status, report: (try? JSONValue.parse(text)) ?? .null, folder: out,
                   output: output)
    }

    /// No process of the run may outlive it.
    static func expectNoneLeft(_ run: Run) {
        let ours = OutputFile.processCommandLines().filter { $0.contains(run.folder) }
        #expect(ours.isEmpty, "left behind: \(ours)")
    }

    @Test func quickstartPassesAndAnEditTravels() throws {
        let run = try Self.run("quickstart")
        defer { Self.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        #expect(run.report["verdict"]?.stringValue == "pass")
        #expect(run.report["seed"]?.intValue == 7)
        #expect(run.report["ops"]?["saved"]?.intValue == 4)
        #expect(run.report["ops"]?["applied"]?.intValue == 4)
        // Edits reached the other devices of the account: 4 edits × 2 other devices.
        #expect(run.report["propagation"]?["count"]?.intValue == 8)
        #expect((run.report["hints"]?["accepted"]?.intValue ?? 0) > 0)
        #expect((run.report["passes"]?["total"]?.intValue ?? 0) > 0)
        #expect(run.report["platforms"]?.arrayValue?.count == 3)
        for name in ["events.jsonl", "report.md", "report.html", "logs/server.log", "server.sqlite", "devices/pixel.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: "\(run.folder)/\(name)"), "\(name)")
        }
        #expect(run.output.contains("PASS"))
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
    }

    @Test func aBrokenTopologyExitsTwoAndStartsNothing() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).json5")
        try "{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"nokia\" }] }] }".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try OutputFile.runSynclab(["run", file.path, "--out", file.path + ".run"], limit: 30)
        #expect(status == 2)
        #expect(output.contains("\(file.path):1: accounts[0].devices[0].platform"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: file.path + ".run"))
    }

    /// The processes whose command line names `folder`.
    static func processes(naming folder: String) -> [String] {
        OutputFile.processCommandLines().filter { $0.contains(folder) }
    }

    /// Starts quickstart, waits until the launcher and its five processes run, then sends the launcher `signal`.
    static func interrupt(with signal: Int32) throws
        -> (status: Int32, reason: Process.TerminationReason, left: [String], out: String)
    {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("synclab-sig-\(UUID().uuidString)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(binDirectory)/synclab")
        process.arguments = ["run", topologies.appendingPathComponent("quickstart.json5").path, "--out", out,
                             "--bin", binDirectory, "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while processes(naming: out).count < 6 && Date() < deadline { usleep(100_000) }
        #expect(processes(naming: out).count == 6, "the launcher and its five processes")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        var left = processes(naming: out)
        let settle = Date().addingTimeInterval(5)
        while !left.isEmpty && Date() < settle {
            usleep(100_000)
            left = processes(naming: out)
        }
        return (process.terminationStatus, process.terminationReason, left, out)
    }

    @Test func ctrlCStopsEveryProcess() throws {
        let result = try Self.interrupt(with: SIGINT)
        #expect(result.reason == .exit)
        #expect(result.status == 130)
        #expect(result.left.isEmpty, "left behind: \(result.left)")
        // The report covers what ran, marked as interrupted, and never passes.
        let text = try String(contentsOfFile: "\(result.out)/report.json", encoding: .utf8)
        let report = try JSONValue.parse(text)
        #expect(report["verdict"]?.stringValue == "fail")
        #expect(report["interruptedIn"]?.stringValue != nil)
    }

    @Test func aKilledLauncherTakesItsProcessesWithIt() throws {
        let result = try Self.interrupt(with: SIGKILL)
        #expect(result.reason == .uncaughtSignal)
        #expect(result.left.isEmpty, "left behind: \(result.left)")
    }
}
