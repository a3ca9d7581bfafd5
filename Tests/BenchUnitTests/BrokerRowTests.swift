import Testing
@testable import Bench

/// `synclab bench --broker`'s row: hints/s beside the raw fan-out, their ratio and the verdict (≥ 0.5×).
@Suite struct BrokerRowTests {
    static func bench(hints: Double, raw: Double) -> Bench {
        var bench = Bench(out: "/nonexistent", bin: "/nonexistent", quick: true)
        bench.record("broker.hintsPerSec", hints)
        bench.record("broker.rawFanoutPerSec", raw)
        return bench
    }

    @Test("a broker under half the raw fan-out is MISSED with its ratio")
    func missed() {
        let row = Self.bench(hints: 254_077, raw: 1_123_986).brokerRow
        #expect(row.1 == "254077")
        #expect(row.2 == "0.23× raw fan-out 1123986/s")
        #expect(row.3 == "MISSED (≥ 0.5× raw: 0.23×)")
    }

    @Test("half the raw fan-out or more is met")
    func met() {
        #expect(Self.bench(hints: 500, raw: 1_000).brokerRow.3 == "met")
        #expect(Self.bench(hints: 499, raw: 1_000).brokerRow.3 == "MISSED (≥ 0.5× raw: 0.50×)")
    }

    @Test("a figure that was not measured is MISSED, not met")
    func unmeasured() {
        #expect(Bench(out: "/x", bin: "/x", quick: true).brokerRow.3.hasPrefix("MISSED"))
    }

    @Test("the broker's table is its one row")
    func table() {
        let table = Self.bench(hints: 600, raw: 1_000).brokerTable
        #expect(table == "broker hints delivered/s  600  0.60× raw fan-out 1000/s  met\n")
    }
}
