import Foundation
import Launcher
import Testing
@testable import Bench

/// `topologies/load-10000.json5` is `LoadTopology.text(devices: 10_000)`, so `synclab run` of the file and
/// `synclab bench --scale` play the same run, and its shape is what the issue asks: 10,000 pooled devices of many
/// accounts.
@Suite struct LoadTopologyTests {
    static let shippedPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../topologies/load-10000.json5").path

    @Test func theShippedFileIsTheGeneratorsOutput() throws {
        let shipped = try String(contentsOfFile: Self.shippedPath, encoding: .utf8)
        #expect(shipped == LoadTopology.text(devices: 10_000),
                "regenerate topologies/load-10000.json5 from LoadTopology.text(devices: 10_000)")
    }

    @Test func tenThousandPooledDevicesInFivehundredAccountsAndFortyPools() throws {
        let topology = try Topology.load(path: Self.shippedPath)
        #expect(topology.devices.count == 10_000)
        #expect(Set(topology.devices.map(\.id)).count == 10_000)
        #expect(topology.accounts.count == 500)
        #expect(topology.accounts.allSatisfy { $0.devices.count == 20 })
        #expect(topology.pools == 40)
        let perPool = Dictionary(grouping: topology.poolAssignment.values, by: { $0 }).mapValues(\.count)
        #expect(perPool.count == 40 && perPool.values.allSatisfy { $0 == 250 })
        // Every device takes part in the behaviour, so every account edits.
        #expect(Set(topology.behaviours.flatMap(\.devices)).count == 10_000)
        #expect(Set(topology.devices.map(\.platform)).count == 3)
    }

    @Test func theQuickVariantIsTheSameShapeSmallerAndShorter() throws {
        let quick = try Topology.parse(LoadTopology.text(devices: 200, quick: true), file: "q.json5", defaultName: "q")
        let full = try Topology.load(path: Self.shippedPath)
        #expect(quick.devices.count == 200)
        #expect(quick.accounts.count == 10)
        #expect(quick.pools == 2)
        #expect(quick.duration < full.duration)
        #expect(quick.broker.chaos.loss == full.broker.chaos.loss)
    }
}
