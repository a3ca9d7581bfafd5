import Foundation
import LabKit
import PushBroker
import SyncDevice
import SyncProtocol
import SyncServer

extension Topology {
    static let deviceCommands = ["open", "background", "forceQuit", "close", "offline", "online", "plug", "unplug",
        "sync",
                                  "reinstall"]
    static let signalCommands = ["kill", "restart", "pause", "resume"]

    /// Reads and checks a topology file. Every mistake names the file, the line, the key and what was expected.
    public static func load(path: String) throws(TopologyError) -> Topology {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw TopologyError(file: path, line: 0, key: "",
                message: "cannot read the file: \(error.localizedDescription)")
        }
        let fallbackName = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parse(text, file: path, defaultName: fallbackName)
    }

    public static func parse(_ text: String, file: String, defaultName: String) throws(TopologyError) -> Topology {
        let root: JSON5Node
        do {
            root = try JSON5Parser.parse(text)
        } catch {
            throw TopologyError(file: file, line: error.line, key: "", message: error.message)
        }
        let r = NodeReader(file: file, node: root, path: "")
        try r.onlyKeys([
            "name", "description", "seed", "timeScale", "duration", "transport", "security", "server", "broker",
            "device",
            "accounts", "scenario", "behaviours", "heal", "pools", "expect", "checks", "nemesis",
            "reference", "hosts", "poolHosts",
        ])
        var t = Topology(
            name: try r.string("name") ?? defaultName,
            description: try r.string("description") ?? "",
            seed: UInt64(try r.int("seed", in: 0...Int(Int32.max)) ?? 1),
            timeScale: try r.number("timeScale", in: 0.001...1_000_000) ?? 60,
            duration: try r.duration("duration") ?? 600,
            transport: Transport(rawValue: try r.oneOf("transport", Transport.allCases.map(\.rawValue)) ?? "ipc")!,
            server: ServerSettings(), broker: BrokerSettings(), device: DeviceSettings(),
            accounts: [], scenario: [], behaviours: [], healTimeoutSec: 60)
        guard t.duration > 0 else { throw r.fail("must be more than 0", at: root["duration"], key: "duration") }
        t.pools = try r.int("pools", in: 0...64) ?? 0
        if let security = try r.oneOf("security", Security.allCases.map(\.rawValue)) {
            t.security = Security(rawValue: security)!
        }

        if let s = try r.object("server") { t.server = try readSettings(s.without("host"), over: t.server) }
        if let b = try r.object("broker") { t.broker = try readSettings(b.without("host"), over: t.broker) }
        if let d = try r.object("device") { t.device = try readDeviceSettings(d, over: t.device) }
        if let h = try r.object("heal") {
            try h.onlyKeys(["timeoutSec"])
            t.healTimeoutSec = try h.number("timeoutSec", in: 1...3600) ?? 60
        }

        guard let accounts = try r.array("accounts") else { throw r.fail("missing required key \"accounts\"") }
        guard !accounts.isEmpty else { throw r.fail("needs at least one account", at: root["accounts"],
            key: "accounts") }
        var seenDevices: [String: Int] = [:]
        var generator = SeededGenerator.derived(seed: t.seed, name: "tokens")
        for a in accounts {
            try a.onlyKeys(["id", "devices", "device", "host"])
            let id = try a.requiredString("id")
            var accountSettings = t.device
            if let d = try a.object("device") { accountSettings = try readDeviceSettings(d, over: t.device) }
            try checkID(id, a, "id")
            if t.accounts.contains(where: { $0.id == id }) {
                throw a.fail("account \"\(id)\" is declared twice", at: a.node["id"], key: a.child("id"))
            }
            guard let devices = try a.array("devices"), !devices.isEmpty else {
                throw a.fail("account \"\(id)\" needs at least one device in \"devices\"")
            }
            var specs: [DeviceSpec] = []
            for d in devices {
                if d.node["generate"] != nil {
                    specs += try readGenerator(d, account: id, settings: accountSettings, seen: &seenDevices,
                                               tokens: &generator)
                    continue
                }
                try d.onlyKeys(["id", "platform", "engagement", "start", "charging", "device", "host", "program",
                             "programTimeoutMs"])
                let deviceID = try d.requiredString("id")
                try checkDeviceID(deviceID, d, "id", seen: &seenDevices)
                guard let platformName = try d.oneOf("platform", Platform.allCases.map(\.rawValue)),
                      let platform = Platform(rawValue: platformName)
                else { throw d.fail("missing required key \"platform\" (android, ios or web)") }
                let token = String(format: "t-%016llx", generator.next())
                specs.append(DeviceSpec(
                    id: deviceID, platform: platform,
                    engagement: try d.number("engagement", in: 0...1000) ?? DeviceSettings().opensPerDay,
                    start: try readStart(d),
                    charging: try d.bool("charging") ?? false, token: token,
                    settings: try d.object("device").map { o throws(TopologyError) in
                        try readDeviceSettings(o, over: accountSettings)
                    } ?? accountSettings, program: try readProgram(d),
                    programTimeoutMs: try d.int("programTimeoutMs", in: 100...600_000) ?? 10_000))
                if specs.last?.program == nil, d.node["programTimeoutMs"] != nil {
                    throw d.fail("applies to an outside device only (with \"program\")", at: d.node["programTimeoutMs"],
                                 key: d.child("programTimeoutMs"))
                }
            }
            t.accounts.append(AccountSpec(id: id, devices: specs))
        }

        for step in try r.array("scenario") ?? [] {
            t.scenario.append(try readStep(step, topology: t))
        }
        t.scenario.sort { $0.at < $1.at }

        if let c = try r.object("checks") { t.checks = try readChecks(c) }
        if let f = try r.object("reference") { t.reference = try readReference(f, topology: t) }
        if let e = try r.object("expect") { t.expect = try readExpect(e, topology: t) }

        for b in try r.array("behaviours") ?? [] {
            try b.onlyKeys(["devices", "accounts", "opensPerDay", "editsPerSession", "sessionMinutes", "drafts",
                            "deleteShare", "users"])
            var ids: [String] = []
            for d in try b.array("devices") ?? [] {
                guard case .string(let id) = d.node.value else { throw d.fail("expected a device id string") }
                guard seenDevices[id] != nil else { throw d.fail("names device \"\(id)\" that no account declares") }
                ids.append(id)
            }
            // A set beside the list: a behaviour over 500 accounts names 10,000 devices.
            var named = Set(ids)
            for a in try b.array("accounts") ?? [] {
                guard case .string(let id) = a.node.value else { throw a.fail("expected an account id string") }
                guard let account = t.accounts.first(where: { $0.id == id }) else {
                    throw a.fail("names account \"\(id)\" that is not declared")
                }
                for device in account.devices where named.insert(device.id).inserted { ids.append(device.id) }
            }
            guard !ids.isEmpty else {
                throw b.fail("needs \"devices\" (a list of device ids) or \"accounts\" (every device of those "
                    + "accounts)")
            }
            t.behaviours.append(Behaviour(
                devices: ids,
                opensPerDay: try b.number("opensPerDay", in: 0...1000) ?? 4,
                editsPerSession: try b.int("editsPerSession", in: 0...1000) ?? 1,
                sessionMinutes: try b.number("sessionMinutes", in: 0.1...1440) ?? 5,
                drafts: try b.int("drafts", in: 1...100_000) ?? 5,
                line: b.node.line,
                deleteShare: try b.number("deleteShare", in: 0...1) ?? 0.1, users: try b.string("users")))
        }
        if root["nemesis"] != nil { t.nemesis = try readNemesis(r, topology: t) }
        t.placement = try readPlacement(r, topology: t)
        try checkOutsideDevices(t, r)
        return t
    }

    /// A `device: {…}` block (topology-wide, an account's or a device's): each key a knob of `DeviceSettings.knobs`,
    /// over the settings it refines.
    static func readDeviceSettings(_ d: NodeReader, over base: DeviceSettings) throws(TopologyError) -> DeviceSettings {
        let settings = try readSettings(d, over: base)
        guard settings.backoffCapSec >= settings.backoffBaseSec else {
            throw d.fail("backoffCapSec must be at least backoffBaseSec", key: d.child("backoffCapSec"))
        }
        return settings
    }

    /// A role's block (`device`, `server`, `broker`): each key a knob of the role's table (a dotted key such as
    /// `profiles.ios` is a key of a nested object), over the settings it refines. Unknown keys and bad values name
    /// the file, the line and the key.
    static func readSettings<S: KnobSettings>(_ block: NodeReader, over base: S) throws(TopologyError) -> S {
        let keys = S.knobs.compactMap(\.key)
        var top: [String] = []
        for key in keys {
            let first = String(key.prefix { $0 != "." })
            if !top.contains(first) { top.append(first) }
        }
        try block.onlyKeys(top)
        var settings = base
        for knob in S.knobs {
            guard let key = knob.key else { continue }
            var reader = block
            var name = key
            if let dot = key.firstIndex(of: ".") {
                let parent = String(key[..<dot])
                guard let nested = try block.object(parent) else { continue }
                try nested.onlyKeys(keys.filter { $0.hasPrefix(parent + ".") }.map {
                    String($0.dropFirst(parent.count + 1))
                })
                reader = nested
                name = String(key[key.index(after: dot)...])
            }
            guard let node = reader.node[name], let text = try knobText(knob, in: reader, name) else { continue }
            do {
                try knob.apply(text, to: &settings)
            } catch {
                throw reader.fail(error.problem, at: node, key: reader.child(name))
            }
        }
        return settings
    }

    /// The value at `name`, read and checked as `knob` accepts it (its range, its choices, a duration's spelling),
    /// as the knob's text; nil when the key is absent. The one reading of a role's key: for its block, for a
    /// `faults` or `chaos` step and for a nemesis's settings alike.
    static func knobText<S: KnobSettings>(_ knob: Knob<S>, in reader: NodeReader,
                                          _ name: String) throws(TopologyError) -> String? {
        guard let node = reader.node[name] else { return nil }
        switch knob.values {
        case .integer(let range):
            return String(try reader.int(name, in: range)!)
        case .number(let range):
            return try reader.number(name, in: range)!.flagText
        case .duration(let range):
            let seconds = try reader.duration(name)!
            guard range.contains(seconds) else {
                throw reader.fail("must be from \(format(range.lowerBound))s to \(format(range.upperBound))s",
                                  at: node, key: reader.child(name))
            }
            return seconds.flagText
        case .bool:
            return try reader.bool(name)! ? "true" : "false"
        case .choice(let allowed):
            return try reader.oneOf(name, allowed)!
        case .accounts:
            return try reader.stringList(name)!.joined(separator: ",")
        }
    }

    /// Keys of a `faults` or `chaos` step (or of a nemesis generator) as the control command's arguments, each read
    /// and checked by the knob it sets in the role's table: the same values as the key in `server: {…}` or
    /// `broker: {…}` and as the role's flag.
    static func knobArguments<S: KnobSettings>(_ reader: NodeReader, _ keys: [String],
                                               of _: S.Type) throws(TopologyError) -> [String: JSONValue] {
        var args: [String: JSONValue] = [:]
        for key in keys {
            guard let knob = S.knob(key: key) else { preconditionFailure("\(key) is not a key of \(S.self).knobs") }
            guard let text = try knobText(knob, in: reader, key) else { continue }
            args[key] = knob.json(text)
        }
        return args
    }

    /// A device's `start`: foreground, background or closed.
    private static func readStart(_ d: NodeReader) throws(TopologyError) -> StartState {
        guard let start = try d.oneOf("start", StartState.allCases.map(\.rawValue)) else {
            return DeviceSettings().startState
        }
        return StartState(rawValue: start)!
    }

    /// `checks: { dataAgeAtOpen: {percent, budgetMin?, per?}, unsyncedAt24h: {maxPercent, per?}, settledAfterHealMin
    /// }`.
    static func readChecks(_ c: NodeReader) throws(TopologyError) -> ProductCheckSettings {
        try c.onlyKeys(["dataAgeAtOpen", "unsyncedAt24h", "settledAfterHealMin", "wastedPasses"])
        var checks = ProductCheckSettings()
        let scopes = ProductCheckSettings.Scope.allCases.map(\.rawValue)
        if let d = try c.object("dataAgeAtOpen") {
            try d.onlyKeys(["percent", "budgetMin", "per"])
            guard let percent = try d.number("percent", in: 0...100) else {
                throw d.fail("missing required key \"percent\" (the share of opens within budget, 0–100)")
            }
            checks.dataAgeAtOpen = .init(percent: percent,
                budgetSec: try d.number("budgetMin", in: 0.001...1e7).map { $0 * 60 },
                                         per: .init(rawValue: try d.oneOf("per", scopes, default: "device")!)!)
        }
        if let u = try c.object("unsyncedAt24h") {
            try u.onlyKeys(["maxPercent", "per"])
            guard let max = try u.number("maxPercent", in: 0...100) else {
                throw u.fail("missing required key \"maxPercent\" (the share of edits allowed unsynced, 0–100)")
            }
            checks.unsyncedAt24h = .init(maxPercent: max,
                                         per: .init(rawValue: try u.oneOf("per", scopes, default: "device")!)!)
        }
        checks.settledAfterHealSec = try c.number("settledAfterHealMin", in: 0...1e7).map { $0 * 60 }
        if let w = try c.object("wastedPasses") {
            try w.onlyKeys(["maxPercent"])
            guard let max = try w.number("maxPercent", in: 0...100) else {
                throw w.fail("missing required key \"maxPercent\" (the share of passes allowed to do nothing, 0–100)")
            }
            checks.wastedPasses = .init(maxPercent: max)
        }
        return checks
    }

    /// `expect: { DEVICE-OR-ACCOUNT-OR-*: ["check", …] }`: names must be declared and checks known.
    static func readExpect(_ e: NodeReader, topology t: Topology) throws(TopologyError) -> Expectation {
        guard case .object(let pairs) = e.node.value else { throw e.fail("expected an object") }
        let known = InvariantChecks.names + ProductCheckSettings.names + [ReferenceFigures.checkName]
        var failures: [String: [String]] = [:]
        for pair in pairs {
            let key = e.child(pair.key)
            let subject = pair.key
            guard subject == "*" || t.account(of: subject) != nil
                || t.accounts.contains(where: { $0.id == subject }) else {
                throw e.fail("\"\(subject)\" is not a device or an account of this topology (or \"*\")", at: pair.node,
                             key: key)
            }
            guard case .array(let items) = pair.node.value else {
                throw e.fail("expected a list of check names", at: pair.node, key: key)
            }
            var names: [String] = []
            for item in items {
                guard case .string(let name) = item.value, known.contains(name) else {
                    throw e.fail("expected check names among \(known.joined(separator: ", "))", at: item, key: key)
                }
                names.append(name)
            }
            failures[subject] = names
        }
        return Expectation(failures: failures)
    }

    /// A device id: well formed, not a process name, not declared before.
    private static func checkDeviceID(_ deviceID: String, _ d: NodeReader, _ key: String,
                                      seen: inout [String: Int]) throws(TopologyError) {
        try checkID(deviceID, d, key)
        let poolName = deviceID.hasPrefix("pool-") && deviceID.dropFirst(5).allSatisfy(\.isNumber)
        guard !["server", "broker", "launcher"].contains(deviceID) && !poolName else {
            throw d.fail("\"\(deviceID)\" is reserved for a process name", at: d.node[key], key: d.child(key))
        }
        if let line = seen[deviceID] {
            throw d.fail("device \"\(deviceID)\" is declared twice (first on line \(line))", at: d.node[key],
                         key: d.child(key))
        }
        seen[deviceID] = d.node.line
    }

    /// `{ generate: N, prefix?, platforms?, engagement?, start?, charging? }` in an account's `devices`: N devices
    /// named PREFIX1…PREFIXN (prefix default "ACCOUNT-"), platforms taken in turn from `platforms`.
    private static func readGenerator(_ d: NodeReader, account: String, settings accountSettings: DeviceSettings,
                                      seen: inout [String: Int],
                                      tokens: inout SeededGenerator) throws(TopologyError) -> [DeviceSpec] {
        try d.onlyKeys(["generate", "prefix", "platforms", "engagement", "start", "charging", "device", "host"])
        var settings = accountSettings
        if let o = try d.object("device") { settings = try readDeviceSettings(o, over: accountSettings) }
        guard let count = try d.int("generate", in: 1...10_000) else {
            throw d.fail("missing required key \"generate\" (how many devices)")
        }
        let prefix = try d.string("prefix") ?? "\(account)-"
        var platforms: [Platform] = []
        for p in try d.array("platforms") ?? [] {
            guard case .string(let name) = p.node.value, let platform = Platform(rawValue: name) else {
                throw p.fail("expected one of android, ios, web")
            }
            platforms.append(platform)
        }
        if d.node["platforms"] != nil && platforms.isEmpty {
            throw d.fail("needs at least one platform", at: d.node["platforms"], key: d.child("platforms"))
        }
        if platforms.isEmpty { platforms = [.android, .ios, .web] }
        let engagement = try d.number("engagement", in: 0...1000) ?? DeviceSettings().opensPerDay
        let start = try readStart(d)
        let charging = try d.bool("charging") ?? false
        var specs: [DeviceSpec] = []
        for n in 1...count {
            let id = "\(prefix)\(n)"
            let generated = NodeReader(file: d.file, node: d.node, path: d.path)
            do {
                try checkDeviceID(id, generated, "prefix", seen: &seen)
            } catch {
                throw TopologyError(file: error.file, line: error.line, key: d.child("prefix"),
                                    message: "generated device id: \(error.message)")
            }
            specs.append(DeviceSpec(id: id, platform: platforms[(n - 1) % platforms.count], engagement: engagement,
                                    start: start, charging: charging, token: String(format: "t-%016llx", tokens.next()),
                                    settings: settings))
        }
        return specs
    }

    private static func checkID(_ id: String, _ r: NodeReader, _ key: String) throws(TopologyError) {
        let ok = id.utf8.count <= 64
            && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        guard ok else {
            throw r.fail("\"\(id)\" must be 1–64 letters, digits, '-' or '_'", at: r.node[key], key: r.child(key))
        }
    }

    private static func readStep(_ s: NodeReader, topology t: Topology) throws(TopologyError) -> ScenarioStep {
        guard let at = try s.duration("at") else { throw s.fail("missing required key \"at\" (a simulated time like "
            + "\"10m\")") }
        guard at <= t.duration else {
            throw s.fail("is after the end of the scenario (duration \(format(t.duration))s)", at: s.node["at"],
                         key: s.child("at"))
        }
        let all = ["edit", "engagement", "refresh", "chaos", "faults", "crash", "partition", "heal"] + deviceCommands
            + signalCommands
        guard let name = try s.oneOf("action", all) else {
            throw s.fail("missing required key \"action\" (one of \(all.joined(separator: ", ")))")
        }
        func device() throws(TopologyError) -> String {
            let id = try s.requiredString("device")
            guard t.account(of: id) != nil else {
                throw s.fail("names device \"\(id)\" that no account declares", at: s.node["device"],
                    key: s.child("device"))
            }
            return id
        }
        let action: ScenarioAction
        switch name {
        case "edit":
            try s.onlyKeys(["at", "action", "device", "draft", "op", "title", "body"])
            let op = try s.oneOf("op", DraftAction.allCases.map(\.rawValue), default: "update")!
            action = .edit(device: try device(), draft: try s.requiredString("draft"),
                action: DraftAction(rawValue: op)!,
                           title: try s.string("title"), body: try s.string("body"))
        case "engagement":
            try s.onlyKeys(["at", "action", "device", "opensPerDay"])
            guard let opens = try s.number("opensPerDay", in: 0...1000) else {
                throw s.fail("missing required key \"opensPerDay\"")
            }
            action = .engagement(device: try device(), opensPerDay: opens)
        case "refresh":
            try s.onlyKeys(["at", "action", "device", "on"])
            guard let on = try s.bool("on") else { throw s.fail("missing required key \"on\" (true or false)") }
            action = .refresh(device: try device(), on: on)
        case "chaos":
            try s.onlyKeys(["at", "action", "device", "off"] + chaosKeys)
            var args = try knobArguments(s, chaosKeys, of: BrokerSettings.self)
            if let v = try s.bool("off") { args["off"] = .bool(v) }
            if s.node["device"] != nil { args["device"] = .string(try device()) }
            guard !args.isEmpty else { throw s.fail("a chaos step needs at least one setting (loss, duplicate, …, "
                + "off)") }
            action = .chaos(args: args)
        case "faults":
            try s.onlyKeys(["at", "action", "off"] + faultKeys)
            var args = try knobArguments(s, faultKeys, of: ServerSettings.self)
            if let v = try s.bool("off") { args["off"] = .bool(v) }
            guard !args.isEmpty else { throw s.fail("a faults step needs at least one setting (dropReply, …, off)") }
            action = .faults(args: args)
        case "partition":
            try s.onlyKeys(["at", "action", "halves"])
            action = .network(command: "partition", cut: NetworkCut(try readHalves(s, topology: t)))
        case "heal":
            try s.onlyKeys(["at", "action"])
            action = .network(command: "heal", cut: NetworkCut([]))
        case "crash":
            try s.onlyKeys(["at", "action", "target", "point", "nth"])
            let target = try s.requiredString("target")
            let role = target == "server" || target == "broker" ? target : "device"
            guard role != "device" || t.account(of: target) != nil else {
                throw s.fail("target must be \"server\", \"broker\" or a device id; got \"\(target)\"",
                             at: s.node["target"], key: s.child("target"))
            }
            let point = try s.requiredString("point")
            guard CrashPoint(rawValue: point)?.role == role else {
                let known = CrashPoint.of(role: role).map(\.rawValue).joined(separator: ", ")
                throw s.fail("\"\(point)\" is not a crash point of a \(role): use one of \(known)",
                             at: s.node["point"], key: s.child("point"))
            }
            action = .crash(target: target, point: point, nth: try s.int("nth", in: 1...1_000_000) ?? 1)
        default:
            if signalCommands.contains(name) {
                try s.onlyKeys(["at", "action", "target"])
                let target = try s.requiredString("target")
                guard target == "server" || target == "broker" || t.account(of: target) != nil else {
                    throw s.fail("target must be \"server\", \"broker\" or a device id; got \"\(target)\"",
                                 at: s.node["target"], key: s.child("target"))
                }
                action = .signal(target: target, command: name)
            } else {
                try s.onlyKeys(["at", "action", "device"])
                action = .device(device: try device(), command: name)
            }
        }
        return ScenarioStep(at: at, action: action, line: s.node.line)
    }
}
