import Foundation
import LabKit
import PushBroker
import SyncDevice
import SyncServer
import Testing
@testable import Launcher

/// docs/TOPOLOGY.md, as the settings tests read it.
enum TopologyDoc {
    static let text: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/TOPOLOGY.md"), encoding: .utf8)) ?? ""
    }()

    /// The section `## \`name\``, up to the next `## ` heading (its `###` subsections included).
    static func section(_ name: String) -> String {
        let parts = ("\n" + text).components(separatedBy: "\n## ")
        return parts.first { $0.hasPrefix("`\(name)`\n") } ?? ""
    }

    /// The rows `| \`key\` | default |` the table's knobs need that `section` lacks.
    static func missingRows<S: KnobSettings>(_ type: S.Type, in section: String) -> [String] {
        S.knobs.compactMap { knob in
            guard let key = knob.key else { return nil }
            let row = "| `\(key)` | \(knob.documentedDefault) |"
            return section.contains(row) ? nil : row
        }
    }
}

/// The server's and the broker's settings: one table each (`ServerSettings.knobs`, `BrokerSettings.knobs`) read
/// from a topology's `server: {…}` and `broker: {…}`, rendered into the argv the launcher starts them with, parsed
/// back by the role's own command line, listed by its `--help` and documented in TOPOLOGY.md.
@Suite struct RoleSettingsTopologyTests {
    static let accounts = #"accounts: [{ id: "acme", devices: [{ id: "a", platform: "android" }] }]"#

    static func topology(_ blocks: String) throws -> Topology {
        try Topology.parse("{ \(blocks), \(accounts) }", file: "t.json5", defaultName: "t")
    }

    static func arguments(_ topology: Topology) -> RunArguments {
        RunArguments(topology: topology, folder: RunFolder(root: "/tmp/synclab-settings-test"), server: "ipc://s",
                     notices: "ipc://n", broker: "ipc://b", epochMicros: 1, keys: nil)
    }

    static func server(_ arguments: [String]) throws -> ServerConfiguration {
        try ServerConfiguration(options: ServerConfiguration.command.parse(arguments))
    }

    static func broker(_ arguments: [String]) throws -> BrokerConfiguration {
        try BrokerCommand.configuration(from: BrokerCommand.spec.parse(arguments))
    }

    /// A value other than the default for every knob of the table, so a round trip exercises each one.
    static func everyKnobChanged<S: KnobSettings>(_ type: S.Type) throws -> S {
        var settings = S()
        for knob in S.knobs {
            let text: String
            switch knob.values {
            case .integer(let range):
                text = String(knob.defaultText == String(range.upperBound) ? range.lowerBound : range.upperBound)
            case .number(let range), .duration(let range):
                text = (knob.defaultText == range.upperBound.flagText ? range.lowerBound : range.upperBound).flagText
            case .bool: text = knob.defaultText == "true" ? "false" : "true"
            case .choice(let allowed): text = allowed.first { $0 != knob.defaultText }!
            case .accounts: text = "acme,globex"
            }
            try knob.apply(text, to: &settings)
            #expect(knob.text(in: settings) != knob.defaultText, "\(knob.flag) kept its default")
        }
        return settings
    }

    @Test func aTopologyWithoutBlocksStartsTheRolesWithTheirDefaultsAndNoSettingFlags() throws {
        let t = try Self.topology("name: \"plain\"")
        let run = Self.arguments(t)
        #expect(run.serverArguments == ["--db", "/tmp/synclab-settings-test/server.sqlite", "--listen", "ipc://s",
                                        "--notify", "ipc://n", "--accounts",
                                        "/tmp/synclab-settings-test/accounts.json"])
        #expect(run.brokerArguments == ["--listen", "ipc://b", "--notices", "ipc://n", "--accounts",
                                        "/tmp/synclab-settings-test/accounts.json"])
        #expect(try Self.server(run.serverArguments).settings == ServerSettings())
        #expect(try Self.broker(run.brokerArguments).settings == BrokerSettings())
    }

    @Test func everyServerKnobCrossesTheCommandLineUnchanged() throws {
        var t = try Self.topology("name: \"x\"")
        t.server = try Self.everyKnobChanged(ServerSettings.self)
        let run = Self.arguments(t)
        #expect(run.serverArguments.contains("--notice-before-commit"))
        #expect(run.serverArguments.contains("--idempotency") && run.serverArguments.contains("off"))
        let parsed = try Self.server(run.serverArguments)
        #expect(parsed.settings == t.server)
        for knob in ServerSettings.knobs { #expect(knob.text(in: parsed.settings) == knob.text(in: t.server),
            "\(knob.flag)") }
    }

    @Test func everyBrokerKnobCrossesTheCommandLineUnchangedAndNoticesFollowTheServer() throws {
        var t = try Self.topology("server: { notifyMode: \"pub\", notifyHwm: 7 }")
        t.broker = try Self.everyKnobChanged(BrokerSettings.self)
        let parsed = try Self.broker(Self.arguments(t).brokerArguments)
        // The broker takes notices the way the server sends them, whatever its own table says.
        #expect(parsed.settings.noticesMode == .sub && parsed.settings.noticesHWM == 7)
        #expect(parsed.settings == t.brokerSettings)
        var expected = t.broker
        expected.noticesMode = .sub
        expected.noticesHWM = 7
        #expect(parsed.settings == expected)
    }

    @Test func theTopologyBlocksReadEveryKindOfKnob() throws {
        let t = try Self.topology("""
            server: { dropRequest: 0.25, replyDelayMs: 120000, synchronous: "full", idempotency: false,
                      replyBeforeCommit: true, switchAccounts: ["acme"] },
            broker: { profiles: { ios: "fcm" }, fcmCollapse: "account", dozeWindowMin: 15, delaySec: "2m",
                      reorderWindowSec: "5s", hintCarriesData: true, hintDataAccounts: [] }
            """)
        #expect(t.server.faults.dropRequest == 0.25 && t.server.faults.replyDelayMs == 120_000)
        #expect(t.server.synchronous == .full && !t.server.switches.idempotency)
        #expect(t.server.switches.replyBeforeCommit && !t.server.switches.noticeBeforeCommit)
        #expect(t.server.switches.accounts == ["acme"])
        #expect(t.broker.profiles.ios == .fcm && t.broker.profiles.android == .fcm && t.broker.profiles.web == .webpush)
        #expect(t.broker.profiles.fcmCollapse == .account && t.broker.profiles.dozeWindowSec == 900)
        #expect(t.broker.chaos.delaySec == 120 && t.broker.reorderWindowSec == 5 && t.broker.hintCarriesData)
        // An empty list is no account at all (not every account): the switch then applies nowhere.
        #expect(t.broker.hintDataAccounts == [])
        let argv = Self.arguments(t).brokerArguments
        #expect(try Self.broker(argv).settings.hintDataAccounts == [])
    }

    /// A mistake in a `server` or `broker` block: the block's text, the key the error must name and words of its
    /// message.
    struct Mistake: Sendable, CustomTestStringConvertible {
        let block: String, key: String, words: String
        var testDescription: String { key }
    }

    static let mistakes = [
        Mistake(block: #"server: { notifyMode: "carrier" }"#, key: "server.notifyMode", words: "one of push, pub"),
        Mistake(block: #"server: { synchronous: "off" }"#, key: "server.synchronous", words: "one of normal, full"),
        Mistake(block: "server: { dropReply: 1.5 }", key: "server.dropReply", words: "between 0 and 1; got 1.5"),
        Mistake(block: #"server: { idempotency: "off" }"#, key: "server.idempotency", words: "expected true or false"),
        Mistake(block: #"server: { switchAccount: ["a"] }"#, key: "server.switchAccount",
                words: #"did you mean "switchAccounts""#),
        Mistake(block: #"broker: { profiles: { ios: "gcm" } }"#, key: "broker.profiles.ios",
            words: "apns, fcm, webpush"),
        Mistake(block: #"broker: { profiles: { iphone: "apns" } }"#, key: "broker.profiles.iphone",
                words: "allowed here: android, ios, web"),
        Mistake(block: #"broker: { profile: { ios: "apns" } }"#, key: "broker.profile",
            words: #"did you mean "profiles""#),
        Mistake(block: #"broker: { delaySec: "soon" }"#, key: "broker.delaySec", words: "expected a duration"),
        Mistake(block: "broker: { noticesHwm: 5 }", key: "broker.noticesHwm", words: "unknown key"),
        Mistake(block: "broker: { hintDataAccounts: [3] }", key: "broker.hintDataAccounts[0]",
            words: "non-empty string"),
    ]

    @Test(arguments: mistakes)
    func aBadServerOrBrokerSettingNamesFileLineAndKey(_ mistake: Mistake) {
        do {
            _ = try Topology.parse("{\n \(mistake.block),\n \(Self.accounts) }", file: "bad.json5", defaultName: "bad")
            Issue.record("accepted \(mistake.block)")
        } catch {
            #expect(error.file == "bad.json5")
            #expect(error.line == 2, "\(error)")
            #expect(error.key == mistake.key, "\(error)")
            #expect(error.message.contains(mistake.words), "\(error.message)")
        }
    }

    /// TOPOLOGY.md lists every key of each table, in its own section, with the default the table has.
    @Test func topologyDocListsEveryKeyOfEveryRoleWithItsDefault() {
        #expect(!TopologyDoc.text.isEmpty)
        #expect(TopologyDoc.missingRows(ServerSettings.self, in: TopologyDoc.section("server")) == [])
        #expect(TopologyDoc.missingRows(BrokerSettings.self, in: TopologyDoc.section("broker")) == [])
        #expect(TopologyDoc.missingRows(DeviceSettings.self, in: TopologyDoc.section("device")) == [])
        // A row in the wrong section does not count.
        #expect(TopologyDoc.missingRows(ServerSettings.self, in: TopologyDoc.section("broker")).count
            == ServerSettings.knobs.count)
    }

    /// `--help` of the server and the broker shows each knob's flag with its default and names its topology key.
    @Test func serverAndBrokerHelpShowEveryKeyWithItsDefault() {
        func check<S: KnobSettings>(_ type: S.Type, help: String) {
            for knob in S.knobs {
                let flag = knob.commandFlag
                #expect(help.contains("--\(knob.flag)"), "\(knob.flag)")
                if let value = flag.defaultValue {
                    // The default shown is the table's (an on|off switch spells true as on).
                    #expect(value == knob.defaultText || (flag.value == "on|off" && value == "on"), "\(knob.flag)")
                    #expect(help.contains("(default: \(value))"), "\(knob.flag)")
                } else {
                    #expect(flag.help.contains("(default: "), "\(knob.flag)")
                }
                if let key = knob.key { #expect(help.contains(" \(key) --\(knob.flag)"), "\(key)") }
            }
        }
        check(ServerSettings.self, help: ServerConfiguration.command.help)
        check(BrokerSettings.self, help: BrokerCommand.spec.help)
        #expect(ServerConfiguration.command.flags.first { $0.name == "notify-hwm" }?.defaultValue == "1000")
        #expect(BrokerCommand.spec.flags.first { $0.name == "profile-ios" }?.defaultValue == "apns")
    }

    /// A switch (`--notice-before-commit`) is off unless given: its default must be false.
    @Test func everySwitchKnobDefaultsToOff() {
        for knob in ServerSettings.knobs where knob.commandFlag.value == nil { #expect(knob.defaultText == "false") }
        for knob in BrokerSettings.knobs where knob.commandFlag.value == nil { #expect(knob.defaultText == "false") }
        for knob in DeviceSettings.knobs where knob.commandFlag.value == nil { #expect(knob.defaultText == "false") }
    }
}
