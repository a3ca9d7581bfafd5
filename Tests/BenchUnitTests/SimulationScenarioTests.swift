import Foundation
import Launcher
import Testing
@testable import Bench

/// The bench's generated simulation scenarios: seed 000's experiment at its published size is the shipped
/// seed000-after topology with more installs, nothing else changed.
@Suite struct SimulationScenarioTests {
    static let seed000After = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../topologies/seeds/seed000-after.json5").path

    static func shipped() throws -> (text: String, topology: Topology) {
        let text = try String(contentsOfFile: seed000After, encoding: .utf8)
        return (text, try Topology.parse(text, file: seed000After, defaultName: "seed000-after"))
    }

    @Test func seed000AtFourInstallsPerPlatformIsTheShippedTopology() throws {
        let (text, shipped) = try Self.shipped()
        let generated = try Topology.parse(try Bench.seed000Topology(installsPerPlatform: 4, from: text),
                                           file: "generated.json5", defaultName: "seed000-after")
        #expect(generated.devices.map(\.id) == shipped.devices.map(\.id))
        #expect(generated.accounts.map(\.id) == shipped.accounts.map(\.id))
        for (a, b) in zip(generated.devices, shipped.devices) {
            #expect(a.platform == b.platform && a.engagement == b.engagement && a.start == b.start
                && a.charging == b.charging, "\(a.id)")
        }
        #expect(generated.seed == shipped.seed && generated.duration == shipped.duration
            && generated.timeScale == shipped.timeScale)
        #expect(generated.reference.count == shipped.reference.count && !shipped.reference.isEmpty)
        // The same behaviour over the same installs: the same steps at the same times.
        let steps = generated.timeline(), expected = shipped.timeline()
        #expect(!expected.isEmpty)
        #expect(steps.map(\.at) == expected.map(\.at))
        #expect(steps.map(\.action) == expected.map(\.action))
    }

    @Test func seed000At400InstallsPerPlatformHasTwelveHundredInstallsEachItsOwnAccount() throws {
        let (text, shipped) = try Self.shipped()
        let generated = try Topology.parse(try Bench.seed000Topology(installsPerPlatform: 400, from: text),
                                           file: "generated.json5", defaultName: "seed000-after-400")
        #expect(generated.devices.count == 1_200)
        #expect(generated.accounts.count == 1_200 && generated.accounts.allSatisfy { $0.devices.count == 1 })
        for platform in ["android", "ios", "web"] {
            #expect(generated.devices.filter { $0.platform.rawValue == platform }.count == 400)
        }
        #expect(Set(generated.behaviours.flatMap(\.devices)) == Set(generated.devices.map(\.id)))
        #expect(generated.reference.count == shipped.reference.count)
        #expect(generated.description.hasPrefix("400 installs per platform."))
    }

    @Test func aTopologyWithoutTheListsIsRefusedByName() {
        let error = #expect(throws: (any Error).self) {
            try Bench.seed000Topology(installsPerPlatform: 4, from: "{ seed: 1, duration: \"1d\" }")
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("accounts"))
    }

    @Test func theScaleTopologyHasTheDevicesAskedFor() throws {
        let topology = try Topology.parse(Bench.scaleTopology(devices: 10), file: "scale.json5", defaultName: "scale")
        #expect(topology.devices.count == 10 && topology.accounts.count == 3)
        #expect(topology.accounts.map { $0.devices.count } == [4, 4, 2])
    }
}
