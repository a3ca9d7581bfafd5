import Foundation
import PushBroker
import SyncServer
import Testing
@testable import Launcher

@Suite struct TopologyTests {
    static let minimal = """
        {
          accounts: [{ id: "acme", devices: [{ id: "a", platform: "android" }] }],
        }
        """

    @Test func defaultsFillEveryKeyLeftOut() throws {
        let t = try Topology.parse(Self.minimal, file: "t.json5", defaultName: "t")
        #expect(t.name == "t")
        #expect(t.seed == 1)
        #expect(t.timeScale == 60)
        #expect(t.duration == 600)
        #expect(t.transport == .ipc)
        #expect(t.server == ServerSettings() && t.server.notifyMode == .push)
        #expect(t.broker == BrokerSettings() && t.broker.profiles.kind(for: .web) == .webpush)
        #expect(t.device.batch == 50)
        #expect(t.devices.map(\.id) == ["a"])
        #expect(t.devices[0].start == .background)
        #expect(t.devices[0].token.hasPrefix("t-"))
        #expect(t.healTimeoutSec == 60)
    }

    @Test func everyDocumentedKeyIsRead() throws {
        let text = """
            // a comment
            {
              name: "full", description: "all keys", seed: 9, timeScale: 100, duration: "2h", transport: "tcp",
              server: { dropReply: 0.1, transient: 0.2, reject: 0.05, replyDelayMs: 5, notifyMode: "pub", notifyHwm: 10,
                        synchronous: "normal" },
              broker: { profiles: { android: "fcm", ios: "apns", web: "webpush" }, loss: 0.3, duplicate: 0.2,
                        delayKind: "uniform", delaySec: "30s", reorder: 0.1, apnsThrottlePerHour: 2, fcmMaxHeld: 50,
                        fcmPriority: "normal", dozeWindowMin: 30, webpushTtlSec: "1d", hintHwm: 100 },
              device: { batch: 10, pageLimit: 20, maxPages: 3, leaseSec: "1m", replyTimeoutMs: 200, maxAttempts: 4,
                        desiredIntervalMin: 30, freshnessBudgetMin: 90 },
              heal: { timeoutSec: 30 },
              accounts: [
                { id: "acme", devices: [
                    { id: "p", platform: "android", engagement: 3, start: "foreground", charging: true },
                    { id: "i", platform: "ios" },
                ] },
              ],
              scenario: [
                { at: "1m", action: "edit", device: "p", draft: "d", op: "create", title: "T", body: "B" },
                { at: "1h30m", action: "kill", target: "server" },
                { at: 5400, action: "restart", target: "server" },
                { at: "2m", action: "chaos", loss: 1, device: "i" },
                { at: "3m", action: "faults", dropReply: 0.5, failCommit: 1 },
                { at: "4m", action: "engagement", device: "i", opensPerDay: 2 },
                { at: "5m", action: "refresh", device: "i", on: false },
                { at: "6m", action: "forceQuit", device: "i" },
              ],
              behaviours: [{ devices: ["p"], opensPerDay: 24, editsPerSession: 2, sessionMinutes: 5, drafts: 3 }],
            }
            """
        let t = try Topology.parse(text, file: "full.json5", defaultName: "x")
        #expect(t.name == "full")
        #expect(t.seed == 9)
        #expect(t.duration == 7200)
        #expect(t.transport == .tcp)
        #expect(t.server.faults.dropReply == 0.1 && t.server.notifyMode == .pub && t.server.synchronous == .normal)
        #expect(t.broker.chaos.loss == 0.3 && t.broker.chaos.delayKind == .uniform && t.broker.chaos.delaySec == 30)
        #expect(t.broker.profiles.webpushTTLSec == 86400 && t.broker.profiles.fcmPriority == .normal)
        #expect(t.broker.hintHWM == 100 && t.broker.profiles.dozeWindowSec == 30 * 60)
        #expect(t.device.leaseSec == 60 && t.device.maxAttempts == 4)
        #expect(t.devices[0].charging && t.devices[0].engagement == 3)
        #expect(t.healTimeoutSec == 30)
        // Sorted by time.
        #expect(t.scenario.map(\.at) == [60, 120, 180, 240, 300, 360, 5400, 5400])
        #expect(t.scenario[0].action == .edit(device: "p", draft: "d", action: .create, title: "T", body: "B"))
        #expect(t.scenario[1].action == .chaos(args: ["loss": .double(1), "device": .string("i")]))
        #expect(t.scenario[2].action == .faults(args: ["dropReply": .double(0.5), "failCommit": .double(1)]))
        #expect(t.behaviours.count == 1)
    }

    /// The smallest valid accounts list, to which a mistake below is added.
    static let oneWebDevice = #"accounts: [{ id: "a", devices: [{ id: "d", platform: "web" }] }]"#

    /// A `faults` or `chaos` step reads its keys with the role's own knobs: a reply delay the server's
    /// `replyDelayMs` takes (up to 600000) is taken by a step too (the step once had its own cap of 60000).
    @Test func aFaultsStepTakesWhatTheServersKeyTakes() throws {
        let text = """
            { \(Self.oneWebDevice), scenario: [
              { at: "1m", action: "faults", replyDelayMs: 120000, dropReply: 0.25 },
              { at: "2m", action: "chaos", delaySec: "2m", delayKind: "constant" },
            ] }
            """
        let t = try Topology.parse(text, file: "t.json5", defaultName: "t")
        #expect(t.scenario[0].action == .faults(args: ["replyDelayMs": .int(120_000), "dropReply": .double(0.25)]))
        #expect(t.scenario[1].action == .chaos(args: ["delaySec": .double(120), "delayKind": .string("constant")]))
        let server = try #require(ServerSettings.knob(key: "replyDelayMs"))
        guard case .integer(let range) = server.values else {
            Issue.record("replyDelayMs is not an integer knob")
            return
        }
        #expect(range.upperBound == 600_000)
    }

    /// Each mistake names the file, the line where it is and the key, and says what was expected.
    @Test(arguments: [
        // (text, line, key, words in the message)
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"android\" }] }],\n  sede: 3 }", 2, "sede",
         "did you mean \"seed\""),
        ("{\n accounts: [{ id: \"a\", devices: [\n { id: \"d\", platform: \"iphone\" }] }] }", 3,
         "accounts[0].devices[0].platform", "expected one of android, ios, web"),
        ("{\n timeScale: \"fast\",\n accounts: [] }", 2, "timeScale", "expected a number"),
        ("{\n accounts: [] }", 2, "accounts", "at least one account"),
        ("{ seed: 1 }", 1, "", "missing required key \"accounts\""),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\" },\n{ id: \"d\", platform: \"ios\" }] }] "
            + "}", 2,
         "accounts[0].devices[1].id", "declared twice"),
        ("{ \(Self.oneWebDevice),\n scenario: [\n { at: \"1m\", action: \"edit\", device: \"ghost\", draft: \"x\" }] }",
         3, "scenario[0].device", "no account declares"),
        ("{ duration: \"10m\", \(Self.oneWebDevice),\n scenario: [\n { at: \"2h\", action: \"open\", device: \"d\" }] "
            + "}",
         3, "scenario[0].at", "after the end"),
        ("{ \(Self.oneWebDevice),\n scenario: [{ at: \"1m\",\n action: \"explode\", device: \"d\" }] }",
         3, "scenario[0].action", "expected one of"),
        ("{ broker: {\n loss: 1.5 },\n \(Self.oneWebDevice) }", 2, "broker.loss", "between 0 and 1"),
        ("{ \(Self.oneWebDevice),\n scenario: [{ at: \"soon\", action: \"open\", device: \"d\" }] }",
         2, "scenario[0].at", "expected a duration"),
        ("{ \(Self.oneWebDevice),\n scenario: [{ at: \"1m\", action: \"kill\", target: \"moon\" }] }",
         2, "scenario[0].target", "target must be"),
        ("{ accounts: [{ id: \"a b\", devices: [{ id: \"d\", platform: \"web\" }] }] }", 1, "accounts[0].id",
         "letters, digits"),
        ("{ device: { batch: 0 },\n \(Self.oneWebDevice) }", 1, "device.batch", "between 1 and"),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"server\", platform: \"web\" }] }] }", 1,
            "accounts[0].devices[0].id",
         "reserved"),
        ("{ accounts: [{ id: \"a\",\n devices: [{ id: \"d\", platform: \"web\" }] }],\n behaviours: [{ devices: "
            + "[\"nobody\"] }] }", 3,
         "behaviours[0].devices[0]", "no account declares"),
        ("{\n accounts: [\n { id: \"a\" devices: [] }] }", 3, "", "expected ',' or '}'"),
        ("{\n accounts: [ // never closed\n", 3, "", "unterminated array"),
        // A step's fault or chaos key takes exactly what the role's key takes (one knob, one range).
        ("{ \(Self.oneWebDevice),\n scenario: [{ at: \"1m\", action: \"faults\",\n replyDelayMs: 700000 }] }", 3,
         "scenario[0].replyDelayMs", "between 0 and 600000"),
        ("{ \(Self.oneWebDevice),\n scenario: [{ at: \"1m\", action: \"chaos\", delayKind: \"gauss\" }] }", 2,
         "scenario[0].delayKind", "expected one of none, constant, uniform, exponential"),
    ])
    func mistakesAreReportedWithFileLineAndKey(text: String, line: Int, key: String, words: String) {
        do {
            _ = try Topology.parse(text, file: "bad.json5", defaultName: "bad")
            Issue.record("accepted a broken topology: \(text)")
        } catch {
            #expect(error.file == "bad.json5")
            #expect(error.line == line, "\(error)")
            #expect(error.key == key, "\(error)")
            #expect(error.description.contains(words), "\(error)")
            #expect(error.description.hasPrefix("bad.json5:\(line): "))
        }
    }

    @Test func aMissingFileIsReportedByName() {
        #expect(throws: TopologyError.self) { try Topology.load(path: "/nonexistent/nothing.json5") }
    }

    @Test func everyShippedTopologyParses() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../topologies")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json5") }
        #expect(files.count >= 8)
        for file in files {
            let t = try Topology.load(path: folder.appendingPathComponent(file).path)
            #expect(!t.accounts.isEmpty, "\(file)")
            #expect(!t.timeline().isEmpty, "\(file) has no steps")
        }
    }

    @Test func behavioursExpandTheSameWayForTheSameSeed() throws {
        let text = """
            { seed: 5, duration: "1d",
              accounts: [{ id: "a", devices: [{ id: "p", platform: "android" }, { id: "w", platform: "web" }] }],
              behaviours: [{ devices: ["p", "w"], opensPerDay: 12, editsPerSession: 2, sessionMinutes: 10 }] }
            """
        let a = try Topology.parse(text, file: "b.json5", defaultName: "b").timeline()
        let b = try Topology.parse(text, file: "b.json5", defaultName: "b").timeline()
        #expect(a.map(\.at) == b.map(\.at))
        #expect(a.map(\.action) == b.map(\.action))
        var other = try Topology.parse(text, file: "b.json5", defaultName: "b")
        other.seed = 6
        #expect(other.timeline().map(\.at) != a.map(\.at))
        // Sessions open before their edits and go to the background after them.
        let p = a.filter {
            if case .device("p", _) = $0.action { return true }
            if case .edit("p", _, _, _, _) = $0.action { return true }
            return false
        }
        #expect(p.first?.action == .device(device: "p", command: "open"))
        #expect(p.count > 10)
        #expect(zip(a, a.dropFirst()).allSatisfy { $0.at <= $1.at })
    }

    @Test func durationsAcceptUnitsAndCompounds() {
        #expect(parseDuration("90s") == 90)
        #expect(parseDuration("15m") == 900)
        #expect(parseDuration("1h30m") == 5400)
        #expect(parseDuration("7d") == 604_800)
        #expect(parseDuration("250ms") == 0.25)
        #expect(parseDuration("12") == 12)
        #expect(parseDuration("soon") == nil)
        #expect(parseDuration("5x") == nil)
        #expect(parseDuration("") == nil)
    }

    // MARK: - Pools and generated devices

    @Test func poolsAndGeneratedDevicesAreRead() throws {
        let text = """
            {
              pools: 3,
              accounts: [
                { id: "red", devices: [{ id: "phone", platform: "ios" },
                                       { generate: 4, prefix: "r", platforms: ["web", "android"], engagement: 8,
                                         start: "foreground", charging: true }] },
                { id: "blue", devices: [{ generate: 2 }] },
              ],
              behaviours: [{ accounts: ["blue"], devices: ["phone"] }],
            }
            """
        let t = try Topology.parse(text, file: "t.json5", defaultName: "t")
        #expect(t.pools == 3)
        #expect(t.devices.map(\.id) == ["phone", "r1", "r2", "r3", "r4", "blue-1", "blue-2"])
        #expect(t.devices[1...4].map(\.platform.rawValue) == ["web", "android", "web", "android"])
        #expect(t.devices[1].engagement == 8 && t.devices[1].start == .foreground && t.devices[1].charging)
        #expect(t.devices[5].platform == .android && t.devices[6].platform == .ios)
        #expect(t.devices[5].engagement == 4 && t.devices[5].start == .background && !t.devices[5].charging)
        #expect(Set(t.devices.map(\.token)).count == 7)
        #expect(t.behaviours[0].devices == ["phone", "blue-1", "blue-2"])
        let pools = t.poolAssignment
        #expect(pools["phone"] == "pool-1" && pools["r1"] == "pool-2" && pools["r2"] == "pool-3"
            && pools["r3"] == "pool-1")
        #expect(Set(pools.values) == ["pool-1", "pool-2", "pool-3"])
    }

    @Test func withoutPoolsEveryDeviceIsItsOwnProcess() throws {
        let t = try Topology.parse(Self.minimal, file: "t.json5", defaultName: "t")
        #expect(t.pools == 0)
        #expect(t.poolAssignment.isEmpty)
    }

    @Test(arguments: [
        // (text, line, key, words in the message)
        ("{ pools: 100,\n accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\" }] }] }", 1, "pools",
         "between 0 and 64"),
        ("{ accounts: [{ id: \"a\", devices: [\n{ generate: 0 }] }] }", 2, "accounts[0].devices[0].generate",
         "between 1 and"),
        ("{ accounts: [{ id: \"a\", devices: [\n{ generate: 2,\n platforms: [\"iphone\"] }] }] }", 3,
         "accounts[0].devices[0].platforms[0]", "expected one of android, ios, web"),
        ("{ accounts: [{ id: \"a\", devices: [\n{ generate: 2,\n count: 5 }] }] }", 3, "accounts[0].devices[0].count",
         "unknown key"),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d2\", platform: \"web\" },\n{ generate: 3, prefix: \"d\" }] }] "
            + "}", 2,
         "accounts[0].devices[1].prefix", "declared twice"),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"pool-1\", platform: \"web\" }] }] }", 1,
         "accounts[0].devices[0].id", "reserved"),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\" }] }],\n behaviours: [{\n accounts: "
            + "[\"zz\"] }] }",
         3, "behaviours[0].accounts[0]", "not declared"),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\" }] }],\n behaviours: [{ opensPerDay: 3 "
            + "}] }",
         2, "behaviours[0]", "needs \"devices\""),
    ])
    func poolAndGeneratorMistakesAreReportedWithFileLineAndKey(text: String, line: Int, key: String, words: String) {
        do {
            _ = try Topology.parse(text, file: "bad.json5", defaultName: "bad")
            Issue.record("accepted a broken topology: \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.key == key, "\(error)")
            #expect(error.description.contains(words), "\(error)")
            #expect(error.description.hasPrefix("bad.json5:\(line): "))
        }
    }
}
