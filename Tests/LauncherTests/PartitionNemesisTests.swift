import Foundation
import SyncProtocol
import Testing
@testable import Launcher

/// The `partition` nemesis kind (docs/HOSTS.md): the cuts it draws from, the partition and heal steps it becomes,
/// its mistakes refused naming file and key, and its band on the timeline. Pure: no bed, no process.
@Suite struct PartitionNemesisTests {
    /// Three hosts: the server on h1, the broker on h2, devices a and b on h3.
    static func topology(nemesis: String, hosts: Int = 3, seed: Int = 5) -> String {
        let declared = (1...hosts).map { "h\($0): { address: \"10.231.0.\(10 + $0)\", identity: \"/k\" }" }
        return """
        {
          transport: "tcp", seed: \(seed), duration: "2h",
          hosts: { \(declared.joined(separator: ", ")) },
          server: { host: "h1" },
          broker: { host: "\(hosts >= 2 ? "h2" : "h1")" },
          accounts: [{ id: "acme", host: "h\(hosts)", devices: [
            { id: "a", platform: "android" },
            { id: "b", platform: "ios" },
          ] }],
          nemesis: \(nemesis),
        }
        """
    }

    static func parse(_ text: String) throws -> Topology { try Topology.parse(text, file: "t.json5", defaultName: "t") }

    @Test func theCutsAreEveryHalvesSplitAndEveryProcessCutFromTheServerOrTheBroker() throws {
        let t = try Self.parse(Self.topology(nemesis: "[{ kind: \"partition\" }]"))
        let p = t.placement
        #expect(t.partitionCuts(["halves"], placement: p) == ["h1|h2,h3", "h1,h2|h3", "h1,h3|h2"])
        #expect(t.partitionCuts(["pairs"], placement: p)
            == ["server|broker", "server|a", "server|b", "broker|a", "broker|b"])
        #expect(t.partitionCuts(["any"], placement: p).count == 8)
        #expect(t.partitionCuts(["h2"], placement: p) == ["h2|h1,h3"])
        #expect(t.partitionCuts(["a"], placement: p) == ["server|a", "broker|a"])
        #expect(Topology.halves(ofCut: "h1,h3|h2") == [["h1", "h3"], ["h2"]])
        // Processes sharing a host are no pair: a host's network cannot cut them apart.
        let two = try Self.parse(Self.topology(nemesis: "[{ kind: \"partition\" }]", hosts: 2))
        #expect(two.partitionCuts(["pairs"], placement: two.placement) == ["server|broker", "server|a", "server|b"])
    }

    @Test func aPartitionNemesisBecomesPartitionThenHealStepsOneAtATime() throws {
        let text = Self.topology(nemesis: "{ maxDown: 1, generators: [{ kind: \"partition\", rate: 20, "
            + "downtime: \"10m\" }, { kind: \"kill\", targets: [\"devices\"], rate: 20, downtime: \"1m\" }] }")
        let t = try Self.parse(text)
        let schedule = t.nemesisSchedule()
        let cuts = schedule.faults.filter { $0.kind == .partition }
        #expect(cuts.count >= 3, "\(schedule.faults)")
        let any = Set(t.partitionCuts(["any"], placement: t.placement))
        for (index, cut) in cuts.enumerated() {
            #expect(any.contains(cut.target), "\(cut.target)")
            // One at a time: `heal` ends every partition.
            if index > 0 { #expect(cut.start >= cuts[index - 1].end, "\(cuts)") }
        }
        // A partition puts no process down: with maxDown 1 the kills are not held back by it.
        let kills = schedule.faults.filter { $0.kind == .kill }
        #expect(!kills.isEmpty)
        #expect(kills.contains { kill in cuts.contains { $0.start <= kill.start && kill.start < $0.end } },
                "no kill fell in a partition: \(schedule.faults)")
        // The steps, read through their own text (this compiler misreads ScenarioAction's payloads from here).
        let steps = schedule.steps.filter { $0.nemesis?.hasPrefix("partition") == true }
        let first = try #require(steps.first)
        let halves = Topology.halves(ofCut: cuts[0].target).map { JSONValue.array($0.map { .string($0) }) }
        #expect(first.json.description.contains("\"action\":\"partition\",\"halves\":\(JSONValue.array(halves))"),
                "\(first.json)")
        #expect(steps.dropFirst().first?.json.description.contains("\"action\":\"heal\"") == true)
        #expect(steps.dropFirst().first?.nemesis == "partition.end")
        // The same seed draws the same cuts.
        #expect(try Self.parse(text).nemesisSchedule().faults == schedule.faults)
    }

    @Test func aPartitionNemesisNeedsTwoHostsAndTargetsThatNameACut() throws {
        let one = topologyRefusal(Self.topology(nemesis: "[{ kind: \"partition\" }]", hosts: 1))
        #expect(one?.key == "nemesis[0].targets" && one?.message.contains("two hosts") == true,
                "\(String(describing: one))")
        let unknown = topologyRefusal(Self.topology(nemesis: "{ generators: [{ kind: \"kill\" }, "
            + "{ kind: \"partition\", targets: [\"halves\", \"zz\"] }] }"))
        #expect(unknown?.key == "nemesis.generators[1].targets" && unknown?.message.contains("\"zz\"") == true
            && unknown?.file == "t.json5", "\(String(describing: unknown))")
        // On this machine alone there is no network of the run's own to cut.
        let local = topologyRefusal(TopologyTests.minimal.replacingOccurrences(
            of: "accounts:", with: "nemesis: [{ kind: \"partition\" }], accounts:"))
        #expect(local?.message.contains("two hosts") == true, "\(String(describing: local))")
        var plain = try Topology.parse(TopologyTests.minimal, file: "t.json5", defaultName: "t")
        #expect(throws: (any Error).self) { try plain.addStandardNemesis("partition") }
        var hosted = try Self.parse(Self.topology(nemesis: "[{ kind: \"kill\" }]"))
        try hosted.addStandardNemesis("partition")
        #expect(hosted.nemesisSchedule().faults.contains { $0.kind == .partition })
    }

    @Test func aPartitionIsABandOverEveryLaneFromItsCutToItsHeal() {
        let events = TimelineModelTests.events([
            (0, "broker", "process.started", #""role":"broker""#),
            (60, "launcher", "network.partitioned", #""halves":[["server"],["broker"]],"hosts":[["h1"],["h2"]]"#),
            (180, "launcher", "network.healed", #""hosts":["h1","h2"]"#),
            (200, "launcher", "network.partitioned", #""halves":[["a"],["server"]],"hosts":[["h3"],["h1"]]"#),
            (300, "launcher", "phase", #""name":"check""#),
        ])
        let model = TimelineModel(events: events, devices: TimelineModelTests.devices)
        let bands = model.bands.filter { $0.kind == .partition }
        #expect(bands.count == 2, "\(model.bands)")
        #expect(bands.first?.lane == nil && bands.first?.start == 60 && bands.first?.end == 180)
        #expect(bands.first?.label == "partition h1 | h2, then healed")
        // One never healed lasts to the end of the run.
        #expect(bands.last?.start == 200 && bands.last?.end == 300 && bands.last?.label == "partition h3 | h1")
    }
}
