import Foundation
import Testing
@testable import Bench

/// The growth exponent and the log-log plot of bench.html: pure functions, no processes.
@Suite struct GrowthPlotTests {
    @Test("the exponent of an exact power law is its power")
    func exactPowerLaw() throws {
        for power in [0.0, 1.0, 1.5, 2.0] {
            let points = [3.0, 10, 30, 100, 300].map { (x: $0, y: 0.2 * pow($0, power)) }
            let exponent = try #require(GrowthPlot.exponent(points))
            #expect(abs(exponent - power) < 1e-9, "power \(power): \(exponent)")
        }
    }

    @Test("the exponent is the least-squares slope of the logs, not the slope between the ends")
    func leastSquares() throws {
        // log10 x = 0, 1, 2, 3 and log10 y = 0, 0, 0, 3: the ends give a slope of 1; the fit Σ dx·dy / Σ dx² =
        // 4.5 / 5 = 0.9.
        let points = [(x: 1.0, y: 1.0), (x: 10.0, y: 1.0), (x: 100.0, y: 1.0), (x: 1000.0, y: 1000.0)]
        let exponent = try #require(GrowthPlot.exponent(points))
        #expect(abs(exponent - 0.9) < 1e-9, "\(exponent)")
    }

    @Test("points that cannot be on a log scale are left out; fewer than two usable points give no exponent")
    func unusablePoints() {
        #expect(GrowthPlot.exponent([(x: 3, y: 1)]) == nil)
        #expect(GrowthPlot.exponent([(x: 3, y: 1), (x: 3, y: 5)]) == nil)
        #expect(GrowthPlot.exponent([(x: 3, y: .nan), (x: 10, y: 0), (x: 30, y: -1)]) == nil)
        let exponent = GrowthPlot.exponent([(x: 3, y: .nan), (x: 10, y: 10), (x: 100, y: 100), (x: 0, y: 5)])
        #expect(exponent.map { abs($0 - 1) < 1e-9 } == true)
    }

    @Test("the plot is self-contained SVG with one circle per usable point, placed on log axes")
    func svg() throws {
        let series = [GrowthPlot.Series(name: "SyncLab <processes>", color: "#123456",
                                        points: [(x: 3, y: 1), (x: 30, y: 10), (x: 300, y: .nan)], line: true),
                      GrowthPlot.Series(name: "peer", color: "#654321", points: [(x: 100, y: 0.5)], line: false)]
        let text = GrowthPlot.svg(title: "p50", yLabel: "ms", series: series)
        #expect(text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(!text.contains("<script"))
        #expect(!text.contains("href"))
        #expect(text.components(separatedBy: "<circle").count - 1 == 3)
        #expect(text.components(separatedBy: "<polyline").count - 1 == 1)
        #expect(text.contains("SyncLab &lt;processes&gt;"))
        // x = 3 and x = 30 are one decade apart, so their circles are a decade's width apart.
        let xs = try circles(text).map(\.x)
        let ys = try circles(text).map(\.y)
        #expect(xs[0] < xs[1] && ys[0] > ys[1])
        // Decades 10^0 … 10^3 on x: each decade a third of the plot's width.
        let decade = xs[1] - xs[0]
        let fromThirty = xs[2] - xs[1]  // 30 → 100 is log10(100/30) ≈ 0.523 of a decade
        #expect(abs(fromThirty / decade - log10(100.0 / 30.0)) < 0.01)
    }

    private func circles(_ svg: String) throws -> [(x: Double, y: Double)] {
        try svg.components(separatedBy: "<circle").dropFirst().map { part in
            func attribute(_ name: String) throws -> Double {
                let after = try #require(part.components(separatedBy: "\(name)=\"").dropFirst().first)
                return try #require(Double(after.prefix { $0 != "\"" }))
            }
            return (try attribute("cx"), try attribute("cy"))
        }
    }
}
