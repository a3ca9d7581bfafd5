import Foundation
import LabKit
import LabTestSupport
import Simulation
import SyncDevice
import SyncProtocol
import SyncServer
import Testing

/// `synclab sim`: the same topology and seed give the same bytes (each run in a process of its own, so nothing of
/// one process's hashing or timing can make them agree by chance), a sweep names its failing seeds with the command
/// that replays each, and a shrink keeps the failing check failing with fewer steps.
@Suite(.serialized) struct SimulationTests {
    /// The suite's topology files, shared by its tests.
    static let scratch = TempFolder.lastingTheProcess()

    static func temporary(_ name: String) -> String { scratch.file("\(name)-\(UUID().uuidString)") }

    static func topology(_ name: String)
        -> String { EndToEndTests.topologies.appendingPathComponent("\(name).json5").path }

    static func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    /// `synclab sim` into a fresh folder, `out` (inside `home`, which holds it until the test lets go).
    static func sim(_ arguments: [String], limit: Double = 120) throws
        -> (status: Int32, output: String, out: String, home: TempFolder)
    {
        let home = TempFolder()
        let out = home.file("run")
        let (status, output) = try EndToEndTests.synclab(["sim"] + arguments + ["--out", out], limit: limit)
        return (status, output, out, home)
    }

    /// A topology that fails a product check on some seeds: hint-loss with every app open required to show data
    /// less than `budgetMin` old.
    static func staleOpens(budgetMin: Int) throws -> String {
        let text = try String(contentsOfFile: topology("hint-loss"), encoding: .utf8).replacingOccurrences(
            of: "broker: { loss: 0.5 },",
            with: "broker: { loss: 0.5 },\n  checks: { dataAgeAtOpen: { percent: 100, budgetMin: \(budgetMin) } },")
        let path = temporary("stale-\(budgetMin)") + ".json5"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: ["quickstart", "crash"])
    func theSameSeedGivesTheSameBytesAndAnotherSeedDoesNot(_ name: String) throws {
        let first = try Self.sim([Self.topology(name), "--seed", "5"])
        let second = try Self.sim([Self.topology(name), "--seed", "5"])
        let other = try Self.sim([Self.topology(name), "--seed", "6"])
        #expect(first.status == 0, "\(first.output)")
        for file in ["events.jsonl", "report.json"] {
            let a = Self.bytes("\(first.out)/\(file)")
            #expect(a.count > 1_000, "\(file) is written")
            // Compared outside #expect: on a failure the test library would diff two large byte strings.
            let b = Self.bytes("\(second.out)/\(file)")
            let same = a == b
            #expect(same, "\(file) differs between two runs of seed 5 (\(a.count) and \(b.count) bytes)")
            // The comparison can fail: another seed draws other latencies and other behaviour, so other bytes.
            let sameForOtherSeed = a == Self.bytes("\(other.out)/\(file)")
            #expect(!sameForOtherSeed, "\(file) is the same for seeds 5 and 6")
        }
        let report = try JSONValue.parse(String(contentsOfFile: "\(first.out)/report.json", encoding: .utf8))
        #expect(report["simulated"]?.boolValue == true)
        #expect(report["replay"]?.stringValue == "synclab sim \(Self.topology(name)) --seed 5")
        #expect(first.output.contains("replay: synclab sim \(Self.topology(name)) --seed 5"))
        // A kill is the loss of memory with the files kept; a restart opens them again.
        if name == "crash" {
            let events = try String(contentsOfFile: "\(first.out)/events.jsonl", encoding: .utf8)
            // crash.json5's three kill steps (server, broker, i1) and its two crash points, which the simulated
            // processes reach in the same drivers as real ones: a1 right after its push left, the server after a
            // commit and before its reply.
            #expect(events.components(separatedBy: "\"type\":\"process.killed\"").count - 1 == 5)
            #expect(events.components(separatedBy: "\"type\":\"process.restarted\"").count - 1 >= 5)
            for point in ["device.after-send-before-reply", "server.after-commit-before-reply"] {
                let target = point.hasPrefix("server") ? "server" : "a1"
                #expect(events.contains("\"type\":\"process.killed\",\"target\":\"\(target)\",\"signal\":\"SIGKILL\","
                    + "\"point\":\"\(point)\",\"by\":\"crash\""),
                        "\(point) fired")
            }
            #expect(report["invariants"]?.arrayValue?.allSatisfy { $0["held"]?.boolValue == true } == true)
            #expect(Self.silences(in: events).isEmpty, "\(Self.silences(in: events))")
        }
        // Every line the simulated processes wrote has a catalogue type with the catalogue's field kinds.
        let lines = try String(contentsOfFile: "\(first.out)/events.jsonl", encoding: .utf8)
        let problems = EventConformance.problems(in: lines)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The databases in memory (memdb, kept across kills, written to the run folder at the end) change nothing a
    /// process decides: crash's kills and restarts give the same bytes as with files, and the folder ends with the
    /// same rows in every database. Without the world's own connection keeping a killed device's database, its
    /// restart would find an empty ledger, and the bytes would differ.
    @Test func databasesInMemoryGiveTheSameBytesAndTheSameDatabases() throws {
        let files = try Self.sim([Self.topology("crash"), "--seed", "5", "--storage", "files"])
        let memory = try Self.sim([Self.topology("crash"), "--seed", "5", "--storage", "memory"])
        #expect(files.status == 0 && memory.status == 0, "\(memory.output)")
        for file in ["events.jsonl", "report.json"] {
            #expect(Self.bytes("\(files.out)/\(file)").count > 1_000)
            // Compared as one Bool: a failing `==` of two large Datas would make the test library diff them.
            let same = Self.bytes("\(files.out)/\(file)") == Self.bytes("\(memory.out)/\(file)")
            #expect(same, "\(file) differs between --storage files and --storage memory")
        }
        let a = try ServerSnapshot.read(path: "\(files.out)/server.sqlite")
        let b = try ServerSnapshot.read(path: "\(memory.out)/server.sqlite")
        #expect(!a.changes.isEmpty && a.changes == b.changes && a.drafts == b.drafts && a.heads == b.heads)
        let devices = try FileManager.default.contentsOfDirectory(atPath: "\(files.out)/devices")
            .filter { $0.hasSuffix(".sqlite") }.sorted()
        #expect(devices.count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(memory.out)/devices")
            .filter { $0.hasSuffix(".sqlite") }.sorted() == devices)
        for device in devices {
            let x = try LedgerSnapshot.read(path: "\(files.out)/devices/\(device)")
            let y = try LedgerSnapshot.read(path: "\(memory.out)/devices/\(device)")
            #expect(!x.ops.isEmpty && x.ops == y.ops && x.replica == y.replica && x.shadow == y.shadow, "\(device)")
            #expect(x.cursor == y.cursor && x.install == y.install && x.opens == y.opens, "\(device)")
        }
        // A bad --storage is refused by name.
        let bad = try Self.sim([Self.topology("quickstart"), "--storage", "disk"])
        #expect(bad.status == 2 && bad.output.contains("--storage must be files, memory or auto"))
        #expect(SimStorage.automatic(devices: SimStorage.filesUpTo) == .files)
        #expect(SimStorage.automatic(devices: SimStorage.filesUpTo + 1) == .memory)
    }

    /// Events a process wrote while it was paused (between `process.paused` and `process.resumed`) or dead (between
    /// `process.killed` and its next `process.started`): a paused process only queues what arrives, a killed one is
    /// gone.
    static func silences(in events: String) -> [String] {
        var quiet: [String: String] = [:]
        var problems: [String] = []
        for line in events.split(separator: "\n") {
            guard let event = try? JSONValue.parse(String(line)), let proc = event["proc"]?.stringValue,
                  let type = event["type"]?.stringValue
            else { continue }
            if proc == "launcher", let target = event["target"]?.stringValue {
                if type == "process.paused" { quiet[target] = "paused" }
                if type == "process.killed" { quiet[target] = "killed" }
                if type == "process.resumed" { quiet[target] = nil }
                continue
            }
            if type == "process.started" && quiet[proc] == "killed" { quiet[proc] = nil }
            if let state = quiet[proc] { problems.append("\(proc) wrote \(type) while \(state)") }
        }
        return problems
    }

    @Test func theSilenceCheckSeesAProcessThatKeptTalking() {
        let events = [
            #"{"proc":"launcher","type":"process.paused","target":"w1"}"#,
            #"{"proc":"w1","type":"pass.start"}"#,
            #"{"proc":"launcher","type":"process.resumed","target":"w1"}"#,
            #"{"proc":"w1","type":"pass.end"}"#,
            #"{"proc":"launcher","type":"process.killed","target":"a1"}"#,
            #"{"proc":"a1","type":"op.sent"}"#,
            #"{"proc":"a1","type":"process.started"}"#,
            #"{"proc":"a1","type":"op.sent"}"#,
        ].joined(separator: "\n")
        #expect(Self.silences(in: events) == ["w1 wrote pass.start while paused", "a1 wrote op.sent while killed"])
    }

    @Test func theSchedulerRunsActionsDueAtOneTimeInTheOrderTheyWereScheduled() {
        let scheduler = SimScheduler(start: 0)
        var order: [Int] = []
        for n in 0..<50 { scheduler.at(100) { order.append(n) } }
        scheduler.at(50) { order.append(-1) }
        scheduler.at(100) {
            // Scheduled while running, for now: after everything already due at this time.
            scheduler.at(100) { order.append(1_000) }
        }
        scheduler.run(until: 99)
        #expect(order == [-1])
        #expect(scheduler.now == 99)
        scheduler.run(until: 200)
        #expect(order == [-1] + Array(0..<50) + [1_000])
        #expect(scheduler.now == 200)
    }

    @Test func aSweepNamesEachFailingSeedWithItsReplay() throws {
        let path = try Self.staleOpens(budgetMin: 30)
        let sweep = try Self.sim([path, "--seeds", "1-6"], limit: 300)
        #expect(sweep.status == 1, "\(sweep.output)")
        let failing = sweep.output.split(separator: "\n").filter { $0.hasPrefix("seed ") }
        #expect(!failing.isEmpty && failing.count < 6, "some seeds fail, not all: \(sweep.output)")
        #expect(sweep.output.contains("\(failing.count) of 6 seeds failed (seeds 1-6): data-age-at-open on "
            + "\(failing.count)"))
        // Each line's replay command gives that seed's failure again, and a seed not listed passes.
        let line = try #require(failing.first)
        #expect(line.contains("(data-age-at-open) — replay: synclab sim \(path) --seed "))
        let seed = try #require(line.split(separator: " ").last.map(String.init))
        let replay = try Self.sim([path, "--seed", seed])
        #expect(replay.status == 1)
        #expect(replay.output.contains("✗ data-age-at-open"))
        let listed = Set(failing.compactMap { $0.split(separator: ":").first?.split(separator: " "
            + "").last.map(String.init) })
        let passing = try #require((1...6).map(String.init).first { !listed.contains($0) })
        #expect(try Self.sim([path, "--seed", passing]).status == 0)
        // The same topology without the product check passes on every seed.
        let clean = try Self.sim([Self.topology("hint-loss"), "--seeds", "1-3"], limit: 300)
        #expect(clean.status == 0, "\(clean.output)")
        #expect(clean.output.contains("0 of 3 seeds failed"))
    }

    @Test func aShrinkKeepsTheCheckFailingWithAFewSteps() throws {
        let path = try Self.staleOpens(budgetMin: 3)
        let shrink = try Self.sim([path, "--seed", "2", "--shrink"], limit: 600)
        #expect(shrink.status == 1, "\(shrink.output)")
        let minimal = "\(shrink.out)-minimal.json5"
        let text = try String(contentsOfFile: minimal, encoding: .utf8)
        let topology = try JSONValue.parse(String(text.split(separator: "\n", maxSplits: 1)[1]))
        let steps = topology["scenario"]?.arrayValue ?? []
        #expect(!steps.isEmpty && steps.count <= 3, "\(steps.count) steps: \(shrink.output)")
        #expect(topology["behaviours"] == nil)
        #expect(shrink.output.contains("replay: synclab sim \(minimal)\n"))
        let replay = try Self.sim([minimal])
        #expect(replay.status == 1)
        #expect(replay.output.contains("✗ data-age-at-open"))
    }

    /// Crash-anywhere kills a device or the server at boundaries the seed draws; the lab's design loses nothing
    /// on any seed, and the same run with one reader's cursor committed before its page (`cursorCommit:
    /// beforePage`) fails cursor-safety on some seeds, naming that reader and nobody else.
    @Test func crashAnywhereFindsTheCursorCommittedBeforeItsPageAndNothingInTheLabsDesign() throws {
        let broken = Self.topology("sim/crash-anywhere")
        let sweep = try Self.sim([broken, "--seeds", "1-8", "--crash-anywhere", "12"], limit: 300)
        #expect(sweep.status == 1, "\(sweep.output)")
        let failing = sweep.output.split(separator: "\n").filter { $0.hasPrefix("seed ") }
        #expect(failing.count >= 2, "crash-anywhere found the broken reader on few seeds: \(sweep.output)")
        #expect(failing.allSatisfy { $0.contains("cursor-safety") && $0.contains("--crash-anywhere 12") })
        // The failures name the broken reader only.
        let seed = try #require(failing.first?.split(separator: " ").last.map(String.init))
        let replay = try Self.sim([broken, "--seed", seed, "--crash-anywhere", "12"])
        #expect(replay.status == 1)
        let report = try JSONValue.parse(String(contentsOfFile: "\(replay.out)/report.json", encoding: .utf8))
        let failed = (report["invariants"]?.arrayValue ?? []).filter { $0["held"]?.boolValue != true }
        #expect(!failed.isEmpty)
        for item in failed {
            let detail = item["detail"]?.stringValue ?? ""
            #expect(detail.contains("before-page") && !detail.contains("with-page"), "\(detail)")
        }
        let events = try String(contentsOfFile: "\(replay.out)/events.jsonl", encoding: .utf8)
        #expect(events.contains("\"point\":\"anywhere.after-"))
        #expect(events.contains("\"by\":\"crash-anywhere\""))
        // The same kills with both readers on the lab's design: every seed passes.
        let text = try String(contentsOfFile: broken, encoding: .utf8)
            .replacingOccurrences(of: "device: { cursorCommit: \"beforePage\" }", with: "")
        #expect(!text.contains("device: { cursorCommit"))
        let correct = Self.temporary("crash-anywhere-correct") + ".json5"
        try text.write(toFile: correct, atomically: true, encoding: .utf8)
        let clean = try Self.sim([correct, "--seeds", "1-8", "--crash-anywhere", "12"], limit: 300)
        #expect(clean.status == 0, "\(clean.output)")
        #expect(clean.output.contains("0 of 8 seeds failed"))
    }

    /// Crash-anywhere also arms named crash points drawn from the seed (point, moment, nth occurrence with work in
    /// flight): over seeds 1–20 every point of every role fires with work in flight at least once, and the lab's
    /// design passes every seed.
    @Test func crashAnywhereReachesEveryCrashPointWithWorkInFlight() throws {
        let text = try String(contentsOfFile: Self.topology("sim/crash-anywhere"), encoding: .utf8)
            .replacingOccurrences(of: "device: { cursorCommit: \"beforePage\" }", with: "")
        let correct = Self.temporary("crash-anywhere-coverage") + ".json5"
        try text.write(toFile: correct, atomically: true, encoding: .utf8)
        let sweep = try Self.sim([correct, "--seeds", "1-20", "--crash-anywhere", "12"], limit: 400)
        #expect(sweep.status == 0, "\(sweep.output)")
        var fired: [String: Int] = [:]
        var planned = 0
        for seed in 1...20 {
            let folder = "\(sweep.out)/seed-\(seed)"
            let report = try JSONValue.parse(String(contentsOfFile: "\(folder)/report.json", encoding: .utf8))
            for row in report["crashCoverage"]?.arrayValue ?? [] {
                fired[row["point"]?.stringValue ?? "?", default: 0] += row["firedWithWork"]?.intValue ?? 0
            }
            let events = try String(contentsOfFile: "\(folder)/events.jsonl", encoding: .utf8)
            if events.contains("\"nemesis\":\"crash-anywhere\"") { planned += 1 }
        }
        #expect(planned == 20, "every seed's plan arms named points as crash steps")
        let missed = CrashPoint.allCases.map(\.rawValue).filter { (fired[$0] ?? 0) == 0 }
        #expect(missed.isEmpty, "never fired with work in flight over seeds 1-20: \(missed); \(fired)")
    }
}
