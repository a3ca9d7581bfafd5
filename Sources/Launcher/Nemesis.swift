import LabKit
import SyncProtocol

/// A topology's `nemesis` block: fault generators (kill, pause, crash, offline, forceQuit, broker chaos windows,
/// server fault windows) with their targets, rates and downtimes, and the limits every fault obeys. `schedule` expands
/// it, from the run's seed, into ordinary scenario steps: the same seed gives the same schedule. Every key and its
/// default: docs/TOPOLOGY.md, "nemesis".
public struct Nemesis: Sendable {
    /// What a generator does to a target, from its start step to its end step.
    public enum Kind: String, CaseIterable, Sendable {
        /// SIGKILL, then `restart` after the downtime.
        case kill
        /// SIGSTOP, then SIGCONT.
        case pause
        /// Arm a crash point (the process dies when it reaches it), then `restart`.
        case crash
        /// A device loses its network, then regains it.
        case offline
        /// The user swipes the app away, then opens it again.
        case forceQuit
        /// A window of broker chaos (global, or for one device), then the topology's own broker settings again.
        case chaos
        /// A window of server faults, then the topology's own server settings again.
        case faults

        /// Chaos and faults windows change settings; they put nothing down.
        var isWindow: Bool { self == .chaos || self == .faults }
        /// Offline and forceQuit act on a device's state, not on its process.
        var isDeviceState: Bool { self == .offline || self == .forceQuit }

        /// The targets `"any"` means for this kind.
        var defaultTargets: [String] {
            switch self {
            case .kill, .pause, .crash: return ["any"]
            case .offline, .forceQuit: return ["devices"]
            case .chaos: return ["broker"]
            case .faults: return ["server"]
            }
        }
    }

    /// How long a fault lasts (simulated seconds): its end step comes that long after its start.
    public enum Downtime: Sendable, Equatable {
        case constant(Double)
        case uniform(min: Double, max: Double)
        case exponential(mean: Double)

        func draw(_ generator: inout SeededGenerator) -> Double {
            switch self {
            case .constant(let value): return value
            case .uniform(let low, let high): return low + (high - low) * generator.unit()
            case .exponential(let mean): return generator.exponential(mean: mean)
            }
        }
    }

    /// One fault generator.
    public struct Generator: Sendable {
        public var kind: Kind
        /// As written: "any", "server", "broker", "devices", a platform, an account id or a device id.
        public var targets: [String]
        /// Faults per simulated hour (exponential gaps); ignored when `interval` is set.
        public var rate: Double
        /// A fixed gap between faults (simulated seconds), instead of `rate`.
        public var interval: Double?
        public var downtime: Downtime
        /// Crash points to pick from (`crash` only); empty: every point of the target's role.
        public var points: [String]
        /// The settings of a `chaos` or `faults` window, as the control command takes them.
        public var settings: [String: JSONValue]
        public var line: Int

        public init(kind: Kind, targets: [String]? = nil, rate: Double = 6, interval: Double? = nil,
                    downtime: Downtime? = nil, points: [String] = [], settings: [String: JSONValue]? = nil,
                    line: Int = 0) {
            self.kind = kind
            self.targets = targets ?? kind.defaultTargets
            self.rate = rate
            self.interval = interval
            self.downtime = downtime ?? Self.defaultDowntime(kind)
            self.points = points
            self.settings = settings ?? Self.defaultSettings(kind)
            self.line = line
        }

        static func defaultDowntime(_ kind: Kind) -> Downtime {
            switch kind {
            case .kill, .crash, .forceQuit: return .uniform(min: 10, max: 60)
            case .pause: return .uniform(min: 5, max: 30)
            case .offline: return .uniform(min: 30, max: 300)
            case .chaos, .faults: return .constant(300)
            }
        }

        static func defaultSettings(_ kind: Kind) -> [String: JSONValue] {
            switch kind {
            case .chaos: return ["loss": 0.5, "duplicate": 0.2]
            case .faults: return ["dropReply": 0.3, "dropRequest": 0.2]
            default: return [:]
            }
        }
    }

    public var generators: [Generator]
    /// At most this many targets down (killed, paused, crashed, offline, force-quit) at once.
    public var maxDown = 2
    /// False: the server and the broker are never down at the same time.
    public var serverWithBroker = false
    /// Faults start within [from, until) simulated seconds; `until` nil: the scenario's end.
    public var from = 0.0
    public var until: Double?
    public var line = 0

    public init(generators: [Generator] = []) { self.generators = generators }

    /// The generators `synclab run --nemesis kill,pause,…` adds: one per kind, with every default.
    public static func standard(_ kinds: [Kind]) -> [Generator] { kinds.map { Generator(kind: $0) } }
}

/// The expanded schedule: each fault with its target and times, the steps they became, and how many drawn faults the
/// limits skipped.
public struct NemesisSchedule: Sendable {
    public struct Fault: Sendable, Equatable {
        public var kind: Nemesis.Kind
        public var target: String
        public var start: Double
        public var end: Double
        public var point: String?
        /// The index of the generator that drew it.
        public var generator: Int
    }

    public var faults: [Fault] = []
    public var skipped = 0
    public var steps: [ScenarioStep] = []

    /// Faults by kind, then by target.
    public var counts: [(kind: String, total: Int, byTarget: [(String, Int)])] {
        Nemesis.Kind.allCases.compactMap { kind in
            let ofKind = faults.filter { $0.kind == kind }
            guard !ofKind.isEmpty else { return nil }
            var byTarget: [String: Int] = [:]
            for fault in ofKind { byTarget[fault.target, default: 0] += 1 }
            return (kind.rawValue, ofKind.count, byTarget.keys.sorted().map { ($0, byTarget[$0]!) })
        }
    }

    /// `nemesis.json5` of the run folder: the schedule as the scenario steps it became, which a topology's
    /// `scenario` takes as they are (replay without the generators).
    func fileText(seed: UInt64) -> String {
        var text = "// The nemesis schedule of this run, drawn from seed \(seed): \(faults.count) faults "
            + "(\(skipped) drawn faults skipped by the limits).\n"
        text += "// Each line is an ordinary scenario step: paste `scenario` into a topology to replay it without "
            + "generators.\n"
        let counts = JSONValue.object(self.counts.map { ($0.kind, .object($0.byTarget.map { ($0.0, .int($0.1)) })) })
        text += "{\n  seed: \(seed),\n  faults: \(faults.count),\n  skipped: \(skipped),\n  byKind: \(counts),\n"
        text += "  scenario: [\n"
        for step in steps { text += "    \(step.json),\n" }
        text += "  ],\n}\n"
        return text
    }

    /// The event fields of `nemesis.schedule`, which the report reads.
    var fields: [(String, JSONValue)] {
        [("faults", .int(faults.count)), ("skipped", .int(skipped)), ("steps", .int(steps.count)),
         ("byKind", .object(counts.map { ($0.kind, .object($0.byTarget.map { ($0.0, .int($0.1)) })) }))]
    }
}

extension Topology {
    /// The nemesis's faults and steps, drawn from the run's seed: each generator from a generator of its own
    /// (`nemesis/INDEX/KIND`), so adding one moves no other's draws; then, in time order, the limits drop the faults
    /// that would break them. Empty without a `nemesis` block.
    public func nemesisSchedule() -> NemesisSchedule {
        guard let nemesis else { return NemesisSchedule() }
        let until = min(nemesis.until ?? duration, duration)
        struct Candidate {
            var fault: NemesisSchedule.Fault
            var order: Int
            var line: Int
        }
        var candidates: [Candidate] = []
        for (index, g) in nemesis.generators.enumerated() {
            let targets = resolveNemesisTargets(g.targets, kind: g.kind)
            guard !targets.isEmpty, g.interval != nil || g.rate > 0 else { continue }
            var draw = SeededGenerator.derived(seed: seed, name: "nemesis/\(index)/\(g.kind.rawValue)")
            func gap() -> Double { g.interval ?? draw.exponential(mean: 3600 / g.rate) }
            var t = nemesis.from + gap()
            while t < until {
                let target = targets[Int(draw.next() % UInt64(targets.count))]
                let end = min(t + max(0.001, g.downtime.draw(&draw)), duration)
                var point: String?
                if g.kind == .crash {
                    let role = target == "server" || target == "broker" ? target : "device"
                    let listed = g.points.isEmpty ? CrashPoint.of(role: role).map(\.rawValue)
                        : g.points.filter { CrashPoint(rawValue: $0)?.role == role }
                    point = listed.isEmpty ? nil : listed[Int(draw.next() % UInt64(listed.count))]
                }
                if g.kind != .crash || point != nil {
                    candidates.append(Candidate(
                        fault: .init(kind: g.kind, target: target, start: t, end: end, point: point, generator: index),
                        order: candidates.count, line: g.line))
                }
                t += gap()
            }
        }
        candidates.sort { ($0.fault.start, $0.order) < ($1.fault.start, $1.order) }

        var schedule = NemesisSchedule()
        var active: [(fault: NemesisSchedule.Fault, holds: Set<String>)] = []
        let assignment = poolAssignment
        for candidate in candidates {
            let fault = candidate.fault
            active.removeAll { $0.fault.end < fault.start }
            let (holds, checks) = nemesisFootprint(fault, pools: assignment)
            let downNow = active.filter { !$0.fault.kind.isWindow }
            let process = assignment[fault.target] ?? fault.target
            var allowed = active.allSatisfy { $0.holds.isDisjoint(with: checks) }
            if !fault.kind.isWindow && downNow.count >= nemesis.maxDown { allowed = false }
            if !nemesis.serverWithBroker && !fault.kind.isWindow && !fault.kind.isDeviceState
                && (process == "server" || process == "broker")
            {
                let other = process == "server" ? "broker" : "server"
                if downNow.contains(where: { $0.fault.target == other && !$0.fault.kind.isDeviceState }) {
                    allowed = false
                }
            }
            guard allowed else {
                schedule.skipped += 1
                continue
            }
            active.append((fault, holds))
            schedule.faults.append(fault)
            let (start, end) = nemesisActions(fault)
            schedule.steps.append(ScenarioStep(at: fault.start, action: start, line: candidate.line,
                                               nemesis: fault.kind.rawValue))
            schedule.steps.append(ScenarioStep(at: fault.end, action: end, line: candidate.line,
                                               nemesis: fault.kind.rawValue + ".end"))
        }
        // Stable: at the same time an end comes before the start that follows it.
        schedule.steps = schedule.steps.enumerated().sorted {
            let a = $0.element, b = $1.element
            let aEnd = a.nemesis?.hasSuffix(".end") == true, bEnd = b.nemesis?.hasSuffix(".end") == true
            return (a.at, aEnd ? 0 : 1, $0.offset) < (b.at, bEnd ? 0 : 1, $1.offset)
        }.map(\.element)
        return schedule
    }

    /// What a fault holds while it lasts, and what it must not meet: a process fault holds its process and every
    /// device in it; a device-state fault holds its device and must not meet a fault of the device's process; a
    /// window holds its setting and its process (so its steps never find the process down).
    private func nemesisFootprint(_ fault: NemesisSchedule.Fault, pools: [String: String])
        -> (holds: Set<String>, checks: Set<String>)
    {
        let process = pools[fault.target] ?? fault.target
        let hosted = Set(pools.filter { $0.value == process }.map(\.key))
        if fault.kind.isDeviceState {
            return ([fault.target], [fault.target, process])
        }
        if fault.kind.isWindow {
            let setting = "\(fault.kind.rawValue):\(fault.target)"
            return ([setting, process], [setting, process])
        }
        let holds = Set([process]).union(hosted)
        return (holds, holds)
    }

    /// The steps that start and end a fault.
    private func nemesisActions(_ fault: NemesisSchedule.Fault) -> (ScenarioAction, ScenarioAction) {
        let target = fault.target
        switch fault.kind {
        case .kill: return (.signal(target: target, command: "kill"), .signal(target: target, command: "restart"))
        case .pause: return (.signal(target: target, command: "pause"), .signal(target: target, command: "resume"))
        case .crash:
            return (.crash(target: target, point: fault.point ?? "", nth: 1),
                    .signal(target: target, command: "restart"))
        case .offline: return (.device(device: target, command: "offline"), .device(device: target, command: "online"))
        case .forceQuit:
            return (.device(device: target, command: "forceQuit"), .device(device: target, command: "open"))
        case .chaos:
            let settings = nemesis?.generators[fault.generator].settings ?? [:]
            if target == "broker" {
                return (.chaos(args: settings), .chaos(args: [
                    "loss": .double(broker.loss), "duplicate": .double(broker.duplicate),
                    "delayKind": .string(broker.delayKind), "delaySec": .double(broker.delaySec),
                    "reorder": .double(broker.reorder),
                ]))
            }
            var own = settings
            own["device"] = .string(target)
            return (.chaos(args: own), .chaos(args: ["off": true, "device": .string(target)]))
        case .faults:
            let settings = nemesis?.generators[fault.generator].settings ?? [:]
            return (.faults(args: settings), .faults(args: [
                "dropReply": .double(server.dropReply), "dropRequest": .double(server.dropRequest),
                "transient": .double(server.transient), "reject": .double(server.reject),
                "replyDelayMs": .int(server.replyDelayMs),
            ]))
        }
    }

    /// The targets a generator's names stand for, each once, in the order written: "any" (every target the kind
    /// can act on), "server", "broker", "devices", a platform, a device id or an account id.
    func resolveNemesisTargets(_ names: [String], kind: Nemesis.Kind) -> [String] {
        var out: [String] = []
        func add(_ items: [String]) { for item in items where !out.contains(item) { out.append(item) } }
        let all = devices.map(\.id)
        for name in names {
            switch name {
            case "any":
                switch kind {
                case .kill, .pause, .crash: add(["server", "broker"] + all)
                case .offline, .forceQuit: add(all)
                case .chaos: add(["broker"])
                case .faults: add(["server"])
                }
            case "server", "broker": add([name])
            case "devices", "device": add(all)
            default:
                if let platform = Platform(rawValue: name) {
                    add(devices.filter { $0.platform == platform }.map(\.id))
                } else if all.contains(name) {
                    add([name])
                } else if let account = accounts.first(where: { $0.id == name }) {
                    add(account.devices.map(\.id))
                }
            }
        }
        return out
    }
}

extension Topology {
    /// `synclab run --nemesis kill,pause,…`: one generator with every default per kind, added to the topology's
    /// nemesis (created with the default limits when it has none).
    public mutating func addStandardNemesis(_ list: String) throws {
        var kinds: [Nemesis.Kind] = []
        for name in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let kind = Nemesis.Kind(rawValue: name) else {
                let known = Nemesis.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw LabError.usage("--nemesis: unknown kind \"\(name)\": use \(known)")
            }
            kinds.append(kind)
        }
        guard !kinds.isEmpty else { throw LabError.usage("--nemesis needs at least one kind, e.g. kill,pause,offline") }
        var nemesis = self.nemesis ?? Nemesis()
        nemesis.generators += Nemesis.standard(kinds)
        self.nemesis = nemesis
    }
}

extension ScenarioStep {
    /// The step in the `scenario` syntax of a topology file (one JSON object; `at` in simulated seconds).
    var json: JSONValue {
        var fields: [(String, JSONValue)] = [("at", .double((at * 1000).rounded() / 1000)),
                                             ("action", .string(action.name))]
        switch action {
        case .edit(let device, let draft, let op, let title, let body):
            fields += [("device", .string(device)), ("draft", .string(draft)), ("op", .string(op.rawValue))]
            if let title { fields.append(("title", .string(title))) }
            if let body { fields.append(("body", .string(body))) }
        case .device(let device, _), .engagement(let device, _), .refresh(let device, _):
            fields.append(("device", .string(device)))
            if case .engagement(_, let opens) = action { fields.append(("opensPerDay", .double(opens))) }
            if case .refresh(_, let on) = action { fields.append(("on", .bool(on))) }
        case .signal(let target, _):
            fields.append(("target", .string(target)))
        case .crash(let target, let point, let nth):
            fields += [("target", .string(target)), ("point", .string(point)), ("nth", .int(nth))]
        case .chaos(let args), .faults(let args):
            fields += args.keys.sorted().map { ($0, args[$0]!) }
        }
        return .object(fields)
    }
}

extension Topology {
    static let nemesisKeys = ["maxDown", "serverWithBroker", "from", "until", "generators"]
    static let generatorKeys = ["kind", "targets", "rate", "interval", "downtime", "points"]
    static let chaosKeys = ["loss", "duplicate", "reorder", "delayKind", "delaySec"]
    static let faultKeys = ["dropReply", "dropRequest", "transient", "reject", "replyDelayMs"]

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
            var settings: [String: JSONValue] = [:]
            for key in ["loss", "duplicate", "reorder", "dropReply", "dropRequest", "transient", "reject"]
            where settingKeys.contains(key) {
                if let v = try g.number(key, in: 0...1) { settings[key] = .double(v) }
            }
            if kind == .chaos {
                if let v = try g.oneOf("delayKind", ["none", "constant", "uniform", "exponential"]) {
                    settings["delayKind"] = .string(v)
                }
                if let v = try g.duration("delaySec") { settings["delaySec"] = .double(v) }
            } else if let v = try g.int("replyDelayMs", in: 0...60_000) {
                settings["replyDelayMs"] = .int(v)
            }
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
