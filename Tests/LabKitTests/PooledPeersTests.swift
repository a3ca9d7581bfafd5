import LabKit
import Testing

/// The envelope rule of a pool's connection (docs/PROTOCOL.md §13, "Pooled links"), as pure logic: the broker's
/// and the server's shells both read pooled messages through it.
@Suite struct PooledPeersTests {
    static let peer: [UInt8] = [7, 1, 2, 3]
    static func make() -> PooledPeers { PooledPeers(members: ["pool-a": ["pixel", "iphone"]]) }

    @Test func aMemberBecomesAVirtualPeerOfItsOwn() {
        var peers = Self.make()
        let outcome = peers.admit([Array("pixel".utf8), [1], [2]], peer: Self.peer, pool: "pool-a", connection: 9)
        guard case let .device(device, virtual, frames) = outcome else {
            Issue.record("refused: \(outcome)")
            return
        }
        #expect(device == "pixel" && frames == [[1], [2]])
        #expect(virtual != Self.peer)
        #expect(peers.route(virtual)?.peer == Self.peer && peers.route(virtual)?.device == Array("pixel".utf8))
        #expect(peers.route(Self.peer) == nil, "the connection's own id is no virtual peer")
        guard case let .device(_, other, _) = peers.admit([Array("iphone".utf8), [1]], peer: Self.peer,
                                                          pool: "pool-a", connection: 9)
        else { return }
        #expect(other != virtual, "two devices on one connection stay two peers")
    }

    /// A device outside the set, a missing envelope or bytes that are no UTF-8 are refused and leave no entry,
    /// however many come: the memory a flood costs is nothing.
    @Test(arguments: [["laptop"], ["pool-a"], ["pixel "]])
    func anOutsiderIsRefusedAndLeavesNothing(_ names: [String]) {
        var peers = Self.make()
        for _ in 0..<1_000 {
            let outcome = peers.admit([Array(names[0].utf8), [1], [2]], peer: Self.peer, pool: "pool-a",
                                      connection: 9)
            guard case let .refused(envelope, message) = outcome else {
                Issue.record("admitted \(names[0])")
                return
            }
            #expect(envelope == Array(names[0].utf8) && message.contains("does not speak for device"))
        }
        #expect(peers.routes.isEmpty)
        if case .device = peers.admit([[0xFF, 0xFE], [1]], peer: Self.peer, pool: "pool-a", connection: 9) {
            Issue.record("admitted bytes that are no UTF-8")
        }
        if case .device = peers.admit([Array("pixel".utf8)], peer: Self.peer, pool: "pool-a", connection: 9) {
            Issue.record("admitted a message with no body")
        }
        #expect(peers.routes.isEmpty)
    }

    @Test func aConnectionsEndTakesItsEntries() {
        var peers = Self.make()
        _ = peers.admit([Array("pixel".utf8), [1]], peer: Self.peer, pool: "pool-a", connection: 9)
        _ = peers.admit([Array("iphone".utf8), [1]], peer: [8], pool: "pool-a", connection: 10)
        peers.ended(9)
        #expect(peers.routes.count == 1 && peers.routes.values.first?.connection == 10)
    }
}

extension PooledPeersTests {
    /// The server sizes a connection's reply queue by the largest pool: what one connection may have in flight.
    @Test func theLargestPoolIsWhatOneConnectionCarries() {
        #expect(PooledPeers(members: [:]).largestPool == 0)
        #expect(PooledPeers(members: ["a": ["x"], "b": ["y", "z", "w"]]).largestPool == 3)
    }
}
