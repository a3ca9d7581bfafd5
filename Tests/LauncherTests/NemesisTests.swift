import Foundation
import SyncProtocol
import Testing
@testable import Launcher

/// The nemesis block: parsing, the seeded schedule, its limits, its replay as plain steps, `--nemesis`.
@Suite struct NemesisTests {
    static let base = """
        {
          seed: 5, duration: "6h",
          accounts: [
            { id: "acme", devices: [{ id: "a1", platform: "android" }, { id: "i1", platform: "ios" }] },
            { id: "zeta", devices: [{ id: "w1", platform: "web" }, { id: "w2", platform: "web" }] },
          ],
          nemesis: NEMESIS,
        }
        """

    static func topology(_ nemesis: String, seed: Int = 5) throws(TopologyError) -> Topology {
        let text = base.replacingOccurrences(of: "NEMESIS", with: nemesis)
            .replacingOccurrences(of: "seed: 5", with: "seed: \(seed)")
        return try Topology.parse(text, file: "n.json5", defaultName: "n")
    }

    static let mix = """
        { maxDown: 2, generators: [
            { kind: "kill", rate: 20, downtime: { kind: "uniform", min: "1m", max: "5m" } },
            { kind: "pause", targets: ["server", "zeta"], interval: "20m", downtime: "2m" },
            { kind: "crash", targets: ["a1", "server"], rate: 4,
              points: ["device.after-claim", "server.after-notice"] },
            { kind: "offline", targets: ["ios", "w2"], rate: 6, downtime: { kind: "exponential", mean: "3m" } },
            { kind: "forceQuit", rate: 3 },
            { kind: "chaos", interval: "1h", downtime: "10m", loss: 0.7 },
            { kind: "faults", interval: "90m", downtime: "10m", dropRequest: 0.4 },
        ] }
        """

    static func described(_ schedule: NemesisSchedule) -> [String] { schedule.steps.map { $0.json.description } }

    @Test func theSameSeedGivesTheSameScheduleAndAnotherSeedAnother() throws {
        let one = try Self.topology(Self.mix).nemesisSchedule()
        let again = try Self.topology(Self.mix).nemesisSchedule()
        let other = try Self.topology(Self.mix, seed: 6).nemesisSchedule()
        #expect(one.faults.count > 50)
        #expect(Self.described(one) == Self.described(again))
        #expect(one.faults == again.faults && one.skipped == again.skipped)
        #expect(Self.described(one) != Self.described(other))
        // Every kind produced faults, each a start and an end step (a partition needs hosts: PartitionNemesisTests).
        #expect(Set(one.faults.map(\.kind)) == Set(Nemesis.Kind.allCases).subtracting([.partition]))
        #expect(one.steps.count == 2 * one.faults.count)
    }

    @Test func theLimitsHoldAtEveryMoment() throws {
        let schedule = try Self.topology(Self.mix).nemesisSchedule()
        #expect(schedule.skipped > 0, "the limits never had to act: the test proves nothing")
        let down = schedule.faults.filter { !$0.kind.isWindow }
        for fault in down {
            let overlapping = down.filter { $0.start <= fault.start && $0.end >= fault.start }
            #expect(overlapping.count <= 2, "more than maxDown down at \(fault.start)")
            let processes = Set(overlapping.filter { !$0.kind.isDeviceState }.map(\.target))
            #expect(!(processes.contains("server") && processes.contains("broker")),
                    "server and broker down at \(fault.start)")
            #expect(Set(overlapping.map(\.target)).count == overlapping.count,
                    "one target down twice at \(fault.start)")
        }
        for fault in schedule.faults {
            #expect(fault.end > fault.start && fault.end <= 6 * 3600)
            if fault.kind == .crash {
                let expected = fault.target == "server" ? "server.after-notice" : "device.after-claim"
                #expect(fault.point == expected)
            }
            if fault.kind.isDeviceState { #expect(["i1", "w2", "a1", "w1"].contains(fault.target)) }
            if fault.kind == .offline { #expect(["i1", "w2"].contains(fault.target)) }
            if fault.kind == .pause { #expect(["server", "w1", "w2"].contains(fault.target)) }
        }
        // The same mix with room for everything skips nothing the limits would have.
        let roomy = try Self.topology(Self.mix.replacingOccurrences(of: "maxDown: 2", with: "maxDown: 100"))
        #expect(roomy.nemesisSchedule().skipped < schedule.skipped)
    }

    @Test func aGeneratorAddedLaterMovesNoOtherGeneratorsDraws() throws {
        let alone = try Self.topology("{ maxDown: 50, generators: [{ kind: \"kill\", targets: [\"a1\"], rate: 10 }] }")
        let with = try Self.topology("""
            { maxDown: 50, generators: [{ kind: "kill", targets: ["a1"], rate: 10 },
                                        { kind: "offline", targets: ["w1"], rate: 10 }] }
            """)
        let kills = with.nemesisSchedule().faults.filter { $0.kind == .kill }
        #expect(kills == alone.nemesisSchedule().faults)
        #expect(with.nemesisSchedule().faults.contains { $0.kind == .offline })
    }

    @Test func theScheduleReplaysAsOrdinaryScenarioSteps() throws {
        let t = try Self.topology(Self.mix)
        let schedule = t.nemesisSchedule()
        // nemesis.json5's scenario, pasted into the same topology without a nemesis, gives the same steps.
        let file = schedule.fileText(seed: t.seed)
        let scenario = try #require(file.range(of: "scenario: [")).lowerBound
        let steps = String(file[scenario...].dropLast(2))
        let replay = Self.base.replacingOccurrences(of: "nemesis: NEMESIS,", with: steps)
        let replayed = try Topology.parse(replay, file: "replay.json5", defaultName: "replay")
        #expect(replayed.nemesis == nil)
        #expect(replayed.scenario.map(\.action) == schedule.steps.map(\.action))
        #expect(replayed.scenario.map(\.at) == schedule.steps.map { ($0.at * 1000).rounded() / 1000 })
        // And the run's timeline holds every nemesis step, marked.
        #expect(t.timeline().filter { $0.nemesis != nil }.count == schedule.steps.count)
    }

    @Test func windowsEndOnTheTopologysOwnSettings() throws {
        let settings = "seed: 5, server: { dropReply: 0.2 }, broker: { loss: 0.1 },"
        let text = Self.base.replacingOccurrences(of: "seed: 5,", with: settings)
            .replacingOccurrences(of: "NEMESIS", with: """
                { generators: [{ kind: "chaos", interval: "2h", downtime: "5m", loss: 0.9 },
                               { kind: "faults", interval: "2h", downtime: "5m", reject: 0.5 }] }
                """)
        let steps = try Topology.parse(text, file: "w.json5", defaultName: "w").nemesisSchedule().steps
        let chaos = steps.compactMap { if case .chaos(let args) = $0.action { return args } else { return nil } }
        let faults = steps.compactMap { if case .faults(let args) = $0.action { return args } else { return nil } }
        #expect(chaos.count == 4 && faults.count == 4)
        #expect(chaos[0]["loss"] == .double(0.9) && chaos[1]["loss"] == .double(0.1))
        #expect(faults[0]["reject"] == .double(0.5))
        #expect(faults[1]["reject"] == .double(0) && faults[1]["dropReply"] == .double(0.2))
    }

    @Test(arguments: [
        ("[{ kind: \"explode\" }]", "nemesis[0].kind", "expected one of"),
        ("[{ kind: \"offline\", targets: [\"server\"] }]", "nemesis[0].targets[0]", "cannot act on the server"),
        ("[{ kind: \"faults\", targets: [\"broker\"] }]", "nemesis[0].targets[0]", "cannot act on the broker"),
        ("[{ kind: \"kill\", targets: [\"moon\"] }]", "nemesis[0].targets[0]", "names nothing"),
        ("[{ kind: \"crash\", targets: [\"server\"], points: [\"device.after-claim\"] }]", "nemesis[0].points",
         "no listed point"),
        ("[{ kind: \"kill\", points: [\"server.after-notice\"] }]", "nemesis[0].points", "only a crash generator"),
        ("[{ kind: \"kill\", downtime: { kind: \"uniform\", min: \"5m\", max: \"1m\" } }]", "nemesis[0].downtime",
         "min ≤ max"),
        ("[{ kind: \"kill\", loss: 0.5 }]", "nemesis[0].loss", "unknown key"),
        ("{ maxDown: 0, generators: [] }", "nemesis.maxDown", "between 1 and"),
        ("{ from: \"2h\", until: \"1h\", generators: [] }", "nemesis.until", "after \"from\""),
    ])
    func mistakesNameTheKey(nemesis: String, key: String, words: String) {
        do {
            _ = try Self.topology(nemesis)
            Issue.record("accepted \(nemesis)")
        } catch {
            #expect(error.key == key, "\(error)")
            #expect(error.description.contains(words), "\(error)")
        }
    }

    @Test func theCommandLineAddsAStandardMix() throws {
        var t = try Topology.parse("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"ios\" }] }] }",
                                   file: "q.json5", defaultName: "q")
        #expect(t.nemesisSchedule().faults.isEmpty)
        try t.addStandardNemesis("kill, pause,offline")
        #expect(t.nemesis?.generators.map(\.kind) == [.kill, .pause, .offline])
        #expect(t.nemesis?.maxDown == 2)
        #expect(throws: Error.self) { try t.addStandardNemesis("kill,dance") }
        #expect(throws: Error.self) { try t.addStandardNemesis("") }
        t.duration = 6 * 3600
        #expect(!t.nemesisSchedule().faults.isEmpty)
    }

    @Test func aCrashStepIsReadAndItsPointCheckedAgainstTheTargetsRole() throws {
        let ok = try Self.topology("[]").timeline()
        #expect(ok.isEmpty)
        let text = Self.base.replacingOccurrences(of: "nemesis: NEMESIS,", with: """
            scenario: [{ at: "1m", action: "crash", target: "i1", point: "device.after-claim", nth: 3 },
                       { at: "2m", action: "crash", target: "server", point: "server.after-notice" }],
            """)
        let t = try Topology.parse(text, file: "c.json5", defaultName: "c")
        #expect(t.scenario.map(\.action) == [.crash(target: "i1", point: "device.after-claim", nth: 3),
                                             .crash(target: "server", point: "server.after-notice", nth: 1)])
        for (step, key, words) in [
            ("{ at: \"1m\", action: \"crash\", target: \"broker\", point: \"server.after-reply\" }",
             "scenario[0].point", "broker.after-accept-before-deliver"),
            ("{ at: \"1m\", action: \"crash\", target: \"moon\", point: \"device.after-claim\" }",
             "scenario[0].target", "target must be"),
            ("{ at: \"1m\", action: \"crash\", target: \"i1\" }", "scenario[0]", "missing required key \"point\""),
            ("{ at: \"1m\", action: \"crash\", target: \"i1\", point: \"device.after-claim\", nth: 0 }",
             "scenario[0].nth", "between 1 and"),
        ] {
            let bad = Self.base.replacingOccurrences(of: "nemesis: NEMESIS,", with: "scenario: [\(step)],")
            do {
                _ = try Topology.parse(bad, file: "c.json5", defaultName: "c")
                Issue.record("accepted \(step)")
            } catch {
                #expect(error.key == key, "\(error)")
                #expect(error.description.contains(words), "\(error)")
            }
        }
    }

    @Test func theShippedStormsKillEveryRoleAboutAHundredTimes() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../topologies/chaos")
        for name in ["storm", "storm-pooled"] {
            let t = try Topology.load(path: folder.appendingPathComponent("\(name).json5").path)
            let kills = t.nemesisSchedule().faults.filter { $0.kind == .kill }
            let server = kills.filter { $0.target == "server" }.count
            let broker = kills.filter { $0.target == "broker" }.count
            let devices = kills.count - server - broker
            for (role, count) in [("server", server), ("broker", broker), ("devices", devices)] {
                #expect((80...130).contains(count), "\(name): \(role) killed \(count) times")
            }
        }
        let short = try Topology.load(path: folder.appendingPathComponent("storm-short.json5").path)
        #expect(Set(short.nemesisSchedule().faults.map(\.kind)) == Set(Nemesis.Kind.allCases).subtracting([.partition]))
    }
}

/// A real run of the short storm: the verdict passes and the report counts exactly the faults the seed generated.
@Suite(.serialized) struct NemesisEndToEndTests {
    @Test func theShortStormPassesWithTheFaultsItsSeedGenerated() throws {
        let run = try EndToEndTests.run("chaos/storm-short", limit: 180)
        defer { EndToEndTests.expectNoneLeft(run) }
        run.expectPassed()
        let path = EndToEndTests.topologies.appendingPathComponent("chaos/storm-short.json5").path
        let topology = try Topology.load(path: path)
        let schedule = topology.nemesisSchedule()
        let nemesis = try #require(run.report["nemesis"])
        #expect(nemesis["scheduled"]?.intValue == schedule.faults.count)
        #expect(nemesis["skippedByLimits"]?.intValue == schedule.skipped)
        #expect(nemesis["carriedOut"]?.intValue == schedule.faults.count, "\(run.report["notes"] ?? .null)")
        #expect(nemesis["failed"]?.intValue == 0)
        for kind in schedule.counts {
            #expect(nemesis["byKind"]?[kind.kind]?["total"]?.intValue == kind.total, "\(kind.kind)")
            for (target, count) in kind.byTarget {
                #expect(nemesis["byKind"]?[kind.kind]?["byTarget"]?[target]?.intValue == count,
                        "\(kind.kind) \(target)")
            }
        }
        // The schedule is in the run folder, as the steps it became.
        let file = try String(contentsOfFile: "\(run.folder)/nemesis.json5", encoding: .utf8)
        #expect(file == schedule.fileText(seed: topology.seed))
        #expect(run.output.contains("nemesis: \(schedule.faults.count) of \(schedule.faults.count) faults carried out"))
    }

    @Test func theCommandLineTurnsAQuietTopologyIntoAChaosExperiment() throws {
        let run = try EndToEndTests.run("quickstart", extra: ["--nemesis", "kill,pause,offline", "--time-scale", "120"])
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        var topology = try Topology.load(path: EndToEndTests.topologies.appendingPathComponent("quickstart.json5").path)
        try topology.addStandardNemesis("kill,pause,offline")
        let schedule = topology.nemesisSchedule()
        #expect(!schedule.faults.isEmpty)
        #expect(run.report["nemesis"]?["carriedOut"]?.intValue == schedule.faults.count)
        #expect(FileManager.default.fileExists(atPath: "\(run.folder)/nemesis.json5"))
    }
}
