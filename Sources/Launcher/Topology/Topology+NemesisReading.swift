import LabKit
import PushBroker
import SyncProtocol
import SyncServer

extension Topology {
    static let nemesisKeys = ["maxDown", "serverWithBroker", "from", "until", "generators"]
    static let generatorKeys = ["kind", "targets", "rate", "interval", "downtime", "points"]
    /// A `chaos` step's or window's settings: the broker's runtime knobs (BrokerSettings+Knobs.swift).
    static var chaosKeys: [String] { BrokerSettings.runtimeKeys }
    /// A `faults` step's or window's settings: the server's runtime knobs (ServerSettings+Knobs.swift).
    static var faultKeys: [String] { ServerSettings.runtimeKeys }

    /// Reads `nemesis`: an object with limits and `generators`, or just the list of generators. Every target name must
    /// stand for something the kind can act on, every crash point must be one of a target's role.
    static func readNemesis(_ r: NodeReader, topology t: Topology) throws(TopologyError) -> Nemesis {
        var nemesis = Nemesis()
        let items: [NodeReader]
        if case .array = r.node["nemesis"]?.value {
            items = try r.array("nemesis") ?? []
        } else {
            guard let n = try r.object("nemesis") else { return nemesis }
            try n.onlyKeys(nemesisKeys)
            nemesis.maxDown = try n.int("maxDown", in: 1...10_000) ?? 2
            nemesis.serverWithBroker = try n.bool("serverWithBroker") ?? false
            nemesis.from = try n.duration("from") ?? 0
            nemesis.until = try n.duration("until")
            if let until = nemesis.until, until <= nemesis.from {
                throw n.fail("must be after \"from\"", at: n.node["until"], key: n.child("until"))
            }
            items = try n.array("generators") ?? []
            nemesis.line = n.node.line
        }
        for g in items {
            nemesis.generators.append(try readGenerator(g, topology: t))
        }
        return nemesis
    }

    private static func readGenerator(_ g: NodeReader, topology t: Topology) throws(TopologyError)
        -> Nemesis.Generator
    {
        let kinds = Nemesis.Kind.allCases.map(\.rawValue)
        guard let kindName = try g.oneOf("kind", kinds), let kind = Nemesis.Kind(rawValue: kindName) else {
            throw g.fail("missing required key \"kind\" (one of \(kinds.joined(separator: ", ")))")
        }
        let settingKeys = kind == .chaos ? chaosKeys : kind == .faults ? faultKeys : []
        try g.onlyKeys(generatorKeys + settingKeys)
        var generator = Nemesis.Generator(kind: kind, line: g.node.line)
        if let list = try g.array("targets") {
            var names: [String] = []
            for item in list {
                guard case .string(let name) = item.node.value else { throw item.fail("expected a target name string") }
                // A partition's cuts need the `hosts` block, read after this one (`checkPartitionNemesis`).
                if kind == .partition {
                    names.append(name)
                    continue
                }
                let resolved = t.resolveNemesisTargets([name], kind: kind)
                guard !resolved.isEmpty else {
                    throw item.fail("\"\(name)\" names nothing a \(kind.rawValue) acts on: use any, server, broker, "
                        + "devices, android, ios, web, an account id or a device id")
                }
                if kind.isDeviceState || kind == .chaos, resolved.contains("server") {
                    throw item.fail("a \(kind.rawValue) cannot act on the server")
                }
                if kind.isDeviceState || kind == .faults, resolved.contains("broker") {
                    throw item.fail("a \(kind.rawValue) cannot act on the broker")
                }
                if kind == .faults, resolved.contains(where: { $0 != "server" }) {
                    throw item.fail("a faults window acts on the server only")
                }
                names.append(name)
            }
            guard !names.isEmpty else {
                throw g.fail("needs at least one target", at: g.node["targets"], key: g.child("targets"))
            }
            generator.targets = names
        }
        generator.rate = try g.number("rate", in: 0...100_000) ?? 6
        if let interval = try g.duration("interval") {
            guard interval > 0 else {
                throw g.fail("must be more than 0", at: g.node["interval"], key: g.child("interval"))
            }
            generator.interval = interval
        }
        if let downtime = g.node["downtime"] {
            generator.downtime = try readDowntime(NodeReader(file: g.file, node: downtime, path: g.child("downtime")))
        }
        if kind == .crash {
            for p in try g.array("points") ?? [] {
                guard case .string(let name) = p.node.value, CrashPoint(rawValue: name) != nil else {
                    let known = CrashPoint.allCases.map(\.rawValue).joined(separator: ", ")
                    throw p.fail("expected a crash point: one of \(known)")
                }
                generator.points.append(name)
            }
            if !generator.points.isEmpty {
                for target in t.resolveNemesisTargets(generator.targets, kind: kind) {
                    let role = target == "server" || target == "broker" ? target : "device"
                    guard generator.points.contains(where: { CrashPoint(rawValue: $0)?.role == role }) else {
                        throw g.fail("target \"\(target)\" is a \(role) and no listed point is a \(role)'s",
                                     at: g.node["points"], key: g.child("points"))
                    }
                }
            }
        } else if g.node["points"] != nil {
            throw g.fail("only a crash generator takes points", at: g.node["points"], key: g.child("points"))
        }
        if !settingKeys.isEmpty {
            let settings = kind == .chaos ? try knobArguments(g, chaosKeys, of: BrokerSettings.self)
                : try knobArguments(g, faultKeys, of: ServerSettings.self)
            if !settings.isEmpty { generator.settings = settings }
        }
        return generator
    }

    /// `"30s"` (constant), or `{ kind: "constant", value }`, `{ kind: "uniform", min, max }`,
    /// `{ kind: "exponential", mean }`, durations all.
    private static func readDowntime(_ d: NodeReader) throws(TopologyError) -> Nemesis.Downtime {
        switch d.node.value {
        case .number(let value):
            guard value > 0 else { throw d.fail("must be more than 0") }
            return .constant(value)
        case .string(let text):
            guard let value = parseDuration(text), value > 0 else {
                throw d.fail("expected a duration above 0 like \"30s\"")
            }
            return .constant(value)
        default:
            try d.onlyKeys(["kind", "value", "min", "max", "mean"])
            let kind = try d.oneOf("kind", ["constant", "uniform", "exponential"], default: "uniform")!
            switch kind {
            case "constant":
                try d.onlyKeys(["kind", "value"])
                guard let value = try d.duration("value"), value > 0 else { throw d.fail("needs \"value\" above 0") }
                return .constant(value)
            case "exponential":
                try d.onlyKeys(["kind", "mean"])
                guard let mean = try d.duration("mean"), mean > 0 else { throw d.fail("needs \"mean\" above 0") }
                return .exponential(mean: mean)
            default:
                try d.onlyKeys(["kind", "min", "max"])
                let low = try d.duration("min") ?? 10
                let high = try d.duration("max") ?? 60
                guard high >= low, high > 0 else { throw d.fail("needs 0 ≤ min ≤ max, max above 0") }
                return .uniform(min: low, max: high)
            }
        }
    }
}
