import Foundation
import Testing
import SyncDevice
@testable import Launcher

/// Device settings given topology-wide, per account and per device: one table (`DeviceSettings.knobs`) read by
/// the topology, rendered into argv and documented in TOPOLOGY.md.
@Suite struct DeviceSettingsTopologyTests {
    static let layered = """
        {
          device: { batch: 20, maxAttempts: 5 },
          accounts: [
            { id: "acme", device: { maxAttempts: 3 }, devices: [
                { id: "a", platform: "android" },
                { id: "b", platform: "android", device: { batch: 1, leaseSec: "2m" } },
                { generate: 2, prefix: "g", platforms: ["web"], device: { beacon: true } },
            ] },
            { id: "other", devices: [{ id: "c", platform: "ios" }] },
          ],
        }
        """

    @Test func aDeviceOverridesItsAccountWhichOverridesTheTopology() throws {
        let t = try Topology.parse(Self.layered, file: "t.json5", defaultName: "t")
        let byID = Dictionary(uniqueKeysWithValues: t.devices.map { ($0.id, $0.settings) })
        #expect(t.device.batch == 20 && t.device.maxAttempts == 5)
        #expect(byID["a"]!.batch == 20 && byID["a"]!.maxAttempts == 3)
        #expect(byID["b"]!.batch == 1 && byID["b"]!.maxAttempts == 3 && byID["b"]!.leaseSec == 120)
        #expect(byID["g1"]!.beaconOnClose && byID["g2"]!.beaconOnClose && byID["g1"]!.maxAttempts == 3)
        #expect(byID["c"]!.batch == 20 && byID["c"]!.maxAttempts == 5 && !byID["c"]!.beaconOnClose)
        // What differs, in the report's words: b differs from a in exactly batch and leaseSec.
        #expect(byID["b"]!.differences(from: byID["a"]!).map(\.key) == ["batch", "leaseSec"])
    }

    @Test func argvCarriesOnlyWhatDiffersAndParsesBackToTheSameSettings() throws {
        var settings = DeviceSettings()
        settings.batch = 7
        settings.synchronous = .full
        settings.desiredIntervalSec = 30 * 60
        let flags = settings.flags()
        #expect(flags == ["--batch", "7", "--desired-interval-min", "30", "--synchronous", "full"])
        let options = try DeviceCommandLine.spec.parse(
            ["--id", "x", "--account", "a", "--token", "t", "--platform", "web", "--db", "/tmp/x", "--server",
                "ipc://s"]
                + flags)
        let parsed = try DeviceCommandLine.configuration(options).settings
        for knob in DeviceSettings.knobs {
            #expect(knob.text(in: parsed) == knob.text(in: settings), "\(knob.key)")
        }
    }

    @Test(arguments: [
        ("{ device: { batch: 0 }, accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\" }] }] }",
         "device.batch", "between 1 and 500; got 0"),
        ("{ accounts: [{ id: \"a\", device: { bacth: 2 }, devices: [{ id: \"d\", platform: \"web\" }] }] }",
         "accounts[0].device.bacth", "did you mean \"batch\""),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\", device: { synchronous: \"fast\" } }] }] "
            + "}",
         "accounts[0].devices[0].device.synchronous", "off, normal, full"),
        ("{ accounts: [{ id: \"a\", devices: [{ id: \"d\", platform: \"web\", device: { backoffCapSec: 1 } }] }] }",
         "accounts[0].devices[0].device.backoffCapSec", "at least backoffBaseSec"),
    ])
    func aBadSettingNamesFileKeyAndWhatIsAllowed(text: String, key: String, words: String) {
        #expect(throws: TopologyError.self) { try Topology.parse(text, file: "bad.json5", defaultName: "bad") }
        do {
            _ = try Topology.parse(text, file: "bad.json5", defaultName: "bad")
        } catch {
            #expect(error.file == "bad.json5")
            #expect(error.key == key)
            #expect(error.message.contains(words), "\(error.message)")
        }
    }

    /// TOPOLOGY.md's `device` section lists every knob with the default the table has, so the doc cannot drift
    /// from the code.
    @Test func topologyDocListsEveryKnobWithItsDefault() {
        #expect(TopologyDoc.missingRows(DeviceSettings.self, in: TopologyDoc.section("device")) == [])
    }

    /// `synclab-device --help` shows each knob's flag with its default.
    @Test func deviceHelpListsEveryKnob() {
        let help = DeviceCommandLine.spec.help
        for knob in DeviceSettings.knobs {
            #expect(help.contains("--\(knob.flag)"), "\(knob.flag)")
        }
        #expect(DeviceCommandLine.spec.flags.first { $0.name == "batch" }?.defaultValue == "50")
    }
}
