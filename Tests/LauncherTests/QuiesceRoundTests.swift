import SyncProtocol
import Testing
@testable import Launcher

/// Quiesce's judgement of a round, shared by real runs and the simulation.
@Suite struct QuiesceRoundTests {
    static let topology = try! Topology.parse("""
        { accounts: [{ id: "acme", devices: [{ id: "a", platform: "android" }, { id: "b", platform: "ios" }] }] }
        """, file: "t.json5", defaultName: "t")

    static func status(_ pending: Int, _ cursor: Int) -> JSONValue {
        .object([("pending", .int(pending)), ("cursor", .int(cursor))])
    }

    @Test func quietOnlyWhenSettledAndUnchangedForAWholeRound() {
        let heads = ["acme": 4]
        let first = QuiesceRound(topology: Self.topology, heads: heads,
                                 statuses: ["a": Self.status(0, 4), "b": Self.status(0, 4)])
        #expect(first.settled)
        #expect(!first.isQuiet(after: .none))
        let second = QuiesceRound(topology: Self.topology, heads: heads,
                                  statuses: ["a": Self.status(0, 4), "b": Self.status(0, 4)])
        #expect(second.isQuiet(after: first))
    }

    @Test func stuckNamesEachDeviceAndWhy() {
        let round = QuiesceRound(topology: Self.topology, heads: ["acme": 4], statuses: ["a": Self.status(2, 3)])
        #expect(!round.settled)
        #expect(round.stuck(in: Self.topology).map(\.text) == ["a: 2 pending ops, cursor 3 of 4", "b did not answer"])
        let fields = round.timeoutFields(rounds: 7, in: Self.topology)
        #expect(fields.map(\.0) == ["rounds", "stuck", "stuckDevices"])
        #expect(fields[2].1 == .array([.string("a"), .string("b")]))
    }
}
