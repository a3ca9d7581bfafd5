import Foundation
import LabKit
import PushBroker
import SyncProtocol
import SyncServer
import Testing

@testable import Launcher

/// Generated from the runtime subset of the server's and the broker's settings tables (the knobs marked
/// `.atRuntime`): for every one, a scenario step with it is accepted, it round-trips through its control command
/// (the instance's control decision, as a pure value), and it is drawn on the timeline. A new runtime fault gets
/// these tests by being one more entry of its table.
struct RuntimeKnobTests {
    /// A value the knob takes that is not its default, as text.
    static func sample<S: KnobSettings>(_ knob: Knob<S>) -> String {
        let base = knob.defaultText
        switch knob.values {
        case .integer(let range):
            let middle = String(range.lowerBound + (range.upperBound - range.lowerBound) / 2)
            return middle == base ? String(range.upperBound) : middle
        case .number(let range), .duration(let range):
            let middle = ((range.lowerBound + range.upperBound) / 2).flagText
            return middle == base ? range.upperBound.flagText : middle
        case .bool: return base == "true" ? "false" : "true"
        case .choice(let allowed): return allowed.first { $0 != base }!
        case .accounts: return base == "a" ? "b" : "a"
        }
    }

    /// The value as JSON5 in a topology.
    static func json5<S: KnobSettings>(_ knob: Knob<S>, _ text: String) -> String {
        switch knob.values {
        case .choice, .accounts: return "\"\(text)\""
        default: return text
        }
    }

    static let serverKeys = ServerSettings.runtimeKeys
    static let brokerKeys = BrokerSettings.runtimeKeys

    @Test func theTablesHaveRuntimeKnobsAndTheNemesisDefaultsAreAmongThem() {
        #expect(Set(Self.serverKeys).isSuperset(of: ["dropReply", "dropRequest", "failCommit", "replyDelayMs"]))
        #expect(Set(Self.brokerKeys) == ["loss", "duplicate", "delayKind", "delaySec", "reorder"])
        #expect(Set(Nemesis.Generator.defaultSettings(.faults).keys).isSubset(of: Self.serverKeys))
        #expect(Set(Nemesis.Generator.defaultSettings(.chaos).keys).isSubset(of: Self.brokerKeys))
    }

    /// docs/TOPOLOGY.md marks exactly the runtime knobs **runtime** in the role's section.
    static func unmarkedRows<S: KnobSettings>(_ type: S.Type, section: String) -> [String] {
        let body = TopologyDoc.section(section)
        return S.knobs.compactMap { knob in
            guard let key = knob.key else { return nil }
            let row = body.split(separator: "\n").first { $0.hasPrefix("| `\(key)` |") }.map(String.init) ?? ""
            return row.contains("| **runtime**: ") == knob.runtime ? nil : key
        }
    }

    @Test func theDocMarksExactlyTheRuntimeKnobs() {
        #expect(!TopologyDoc.section("server").isEmpty && !TopologyDoc.section("broker").isEmpty)
        #expect(Self.unmarkedRows(ServerSettings.self, section: "server") == [])
        #expect(Self.unmarkedRows(BrokerSettings.self, section: "broker") == [])
    }

    // MARK: - A step with it is accepted

    static let base = #"duration: "1h", accounts: [{ id: "a", devices: [{ id: "d", platform: "web" }] }]"#

    /// The arguments of a `faults` or `chaos` step.
    static func arguments(_ action: ScenarioAction) -> [String: JSONValue]? {
        switch action {
        case .faults(let args), .chaos(let args): return args
        default: return nil
        }
    }

    /// A step of `action` (`faults`, `chaos`) with the knob is read as that argument, and a nemesis window of that
    /// kind sets it and ends on the topology's value.
    static func expectStepAndWindow<S: KnobSettings>(_ type: S.Type, _ action: String, _ key: String) throws {
        let knob = try #require(S.knob(key: key))
        let text = sample(knob)
        let setting = "\(key): \(json5(knob, text))"
        let t = try Topology.parse("{ \(base), scenario: [{ at: \"1m\", action: \"\(action)\", \(setting) }] }",
                                   file: "k.json5", defaultName: "k")
        #expect(t.scenario.first.flatMap { arguments($0.action) } == [key: knob.json(text)])
        #expect(t.scenario.first.map { "\($0.action)".hasPrefix(action) } == true)
        let window = try Topology.parse(
            "{ \(base), nemesis: [{ kind: \"\(action)\", interval: \"20m\", \(setting) }] }",
            file: "k.json5", defaultName: "k")
        let steps = window.nemesisSchedule().steps.compactMap { arguments($0.action) }
        #expect(steps.first?[key] == knob.json(text), "a nemesis window sets it")
        #expect(steps.dropFirst().first?[key] == knob.json(knob.defaultText), "and ends on the topology's value")
    }

    @Test(arguments: serverKeys)
    func aFaultsStepTakesEveryServerRuntimeKnob(key: String) throws {
        try Self.expectStepAndWindow(ServerSettings.self, "faults", key)
    }

    @Test(arguments: brokerKeys)
    func aChaosStepTakesEveryBrokerRuntimeKnob(key: String) throws {
        try Self.expectStepAndWindow(BrokerSettings.self, "chaos", key)
    }

    // MARK: - It round-trips through the control command

    static func serverControl(_ instance: inout ServerInstance, _ args: [String: JSONValue])
        -> (ack: ControlAck?, event: EventLine?)
    {
        let frames = Codec.encode(.control(Control(req: 1, command: "faults", args: args)))
        let out = instance.onControlMessage(from: Peer(routingID: Array("launcher".utf8)), frames: frames)
        var ack: ControlAck?
        var event: EventLine?
        for directive in out {
            if case .controlReply(_, .controlAck(let reply)) = directive { ack = reply }
            if case .log(let line) = directive, line.type == "fault.set" { event = line }
        }
        return (ack, event)
    }

    @Test(arguments: serverKeys)
    func everyServerRuntimeKnobRoundTripsThroughFaults(key: String) throws {
        let knob = try #require(ServerSettings.knob(key: key))
        let text = Self.sample(knob)
        var instance = ServerInstance(devices: [], heads: [:], seed: 1)
        let (ack, event) = Self.serverControl(&instance, [key: knob.json(text)])
        #expect(ack?.ok == true, "\(ack?.detail ?? "no reply")")
        var settings = ServerSettings()
        settings.faults = instance.faults
        #expect(knob.text(in: settings) == text, "the instance keeps it")
        #expect(event?[key] == knob.json(text), "fault.set carries it")
        #expect(ack?.data?[key] == knob.json(text), "the reply carries it")
        // A value outside its knob's range is refused and changes nothing.
        if case .integer(let range) = knob.values {
            #expect(Self.serverControl(&instance, [key: .int(range.upperBound + 1)]).ack?.ok == false)
        } else if case .number(let range) = knob.values {
            #expect(Self.serverControl(&instance, [key: .double(range.upperBound + 1)]).ack?.ok == false)
        }
        #expect(knob.text(in: settings) == text)
    }

    @Test(arguments: brokerKeys)
    func everyBrokerRuntimeKnobRoundTripsThroughChaos(key: String) throws {
        let knob = try #require(BrokerSettings.knob(key: key))
        let text = Self.sample(knob)
        var instance = BrokerInstance(directory: try AccountDirectory([]), seed: 1)
        let out = instance.onControlMessage(
            Codec.encode(.control(Control(req: 1, command: "chaos", args: [key: knob.json(text)]))),
            peer: Array("launcher".utf8), now: 0)
        var ack: ControlAck?
        var event: EventLine?
        for directive in out {
            if case .reply(_, _, .controlAck(let reply)) = directive { ack = reply }
            if case .log(let line) = directive, line.type == "fault.set" { event = line }
        }
        #expect(ack?.ok == true, "\(ack?.detail ?? "no reply")")
        var settings = BrokerSettings()
        settings.chaos = instance.chaos
        #expect(knob.text(in: settings) == text, "the instance keeps it")
        #expect(event?[key] == knob.json(text), "fault.set carries it")
    }

    // MARK: - It is drawn on the timeline

    static func event(_ sim: Double, _ proc: String, _ type: String, _ fields: [(String, JSONValue)]) -> Event {
        let head: [(String, JSONValue)] = [
            ("wall", .int(1_000_000 + Int(sim) * 1000)), ("sim", .double(sim)), ("proc", .string(proc)),
            ("type", .string(type)),
        ]
        return Event(wall: Int64(1_000_000 + Int(sim) * 1000), sim: sim, proc: proc, type: type,
                     fields: .object(head + fields))
    }

    static func model(_ proc: String, _ fields: [(String, JSONValue)]) -> TimelineModel {
        let events = [
            event(0, proc, "process.started", [("role", .string(proc))]),
            event(60, proc, "fault.set", fields),
            event(120, proc, "fault.set",
                  proc == "server" ? ServerFaults.off.fields : [("scope", "all"), ("off", true)]),
            event(200, "launcher", "phase", [("name", "check")]),
        ]
        let device = TimelineModel.DeviceInfo(id: "d", account: "a", platform: "web", start: "foreground", host: "d")
        return TimelineModel(events: events, devices: [device])
    }

    /// The knob set to a sample value in a `fault.set` of `proc` (its `fields` of the settings) is one fault band on
    /// the role's lane, from that event to the one that clears it, and its label names the knob and the value.
    static func expectBand<S: KnobSettings>(_ type: S.Type, _ proc: String, _ key: String,
                                            fields: (S) -> [(String, JSONValue)]) throws {
        let knob = try #require(S.knob(key: key))
        let text = sample(knob)
        var settings = S()
        try knob.apply(text, to: &settings)
        let bands = model(proc, fields(settings)).bands.filter { $0.kind == .fault }
        #expect(bands.count == 1 && bands.first?.label.contains("\(key) \(text)") == true, "\(bands)")
        #expect(bands.first?.lane == proc && bands.first?.start == 60 && bands.first?.end == 120)
        #expect(settings.runtimeLabels == ["\(key) \(text)"], "the band of the role's flags names it too")
    }

    @Test(arguments: serverKeys)
    func everyServerRuntimeKnobIsDrawnAsABand(key: String) throws {
        try Self.expectBand(ServerSettings.self, TimelineModel.serverLane, key) { $0.faults.fields }
    }

    @Test(arguments: brokerKeys)
    func everyBrokerRuntimeKnobIsDrawnAsABand(key: String) throws {
        try Self.expectBand(BrokerSettings.self, TimelineModel.brokerLane, key) {
            [("scope", "global")] + $0.chaos.fields
        }
    }
}
