import Foundation
import Markup

/// How a cost grows with the number of devices: the least-squares exponent, and a log-log plot as self-contained
/// SVG (no script, no external file).
enum GrowthPlot {
    /// One line or set of points on the plot.
    struct Series {
        let name: String
        let color: String
        let points: [(x: Double, y: Double)]
        /// Joined by a line (a measured series) or points only.
        let line: Bool
    }

    /// The slope of log y against log x by least squares: y ∝ x^slope. Nil with fewer than two usable points (both
    /// coordinates finite and positive) or when every x is the same.
    static func exponent(_ points: [(x: Double, y: Double)]) -> Double? {
        let usable = points.filter { $0.x > 0 && $0.y > 0 && $0.x.isFinite && $0.y.isFinite }
        guard usable.count >= 2 else { return nil }
        let xs = usable.map { log($0.x) }, ys = usable.map { log($0.y) }
        let mx = xs.reduce(0, +) / Double(xs.count), my = ys.reduce(0, +) / Double(ys.count)
        var sxy = 0.0, sxx = 0.0
        for (x, y) in zip(xs, ys) {
            sxy += (x - mx) * (y - my)
            sxx += (x - mx) * (x - mx)
        }
        return sxx > 0 ? sxy / sxx : nil
    }

    /// A log-log chart of `series` (x: devices, y: `yLabel`), `width` × `height` pixels, with decade grid lines.
    static func svg(title: String, yLabel: String, series: [Series], width: Double = 560, height: Double = 360)
        -> String {
        let all = series.flatMap(\.points).filter { $0.x > 0 && $0.y > 0 && $0.x.isFinite && $0.y.isFinite }
        let left = 64.0, right = 150.0, top = 34.0, bottom = 44.0
        let plotW = width - left - right, plotH = height - top - bottom
        func decadeBounds(_ values: [Double]) -> (Double, Double) {
            guard let lo = values.min(), let hi = values.max() else { return (0, 1) }
            let a = floor(log10(lo)), b = ceil(log10(hi))
            return (a, b > a ? b : a + 1)
        }
        let (x0, x1) = decadeBounds(all.map(\.x)), (y0, y1) = decadeBounds(all.map(\.y))
        func px(_ x: Double) -> Double { left + (log10(x) - x0) / (x1 - x0) * plotW }
        func py(_ y: Double) -> Double { top + plotH - (log10(y) - y0) / (y1 - y0) * plotH }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        func label(_ exponent: Double) -> String {
            let v = pow(10, exponent)
            return v >= 1 ? String(format: "%.0f", v) : String(format: "%g", v)
        }
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(width))\" height=\"\(f(height))\" "
        out += "viewBox=\"0 0 \(f(width)) \(f(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        out += "<text x=\"\(f(left))\" y=\"18\" font-size=\"13\" font-weight=\"bold\">\(Markup.text(title))</text>\n"
        for d in stride(from: x0, through: x1, by: 1) {
            let x = left + (d - x0) / (x1 - x0) * plotW
            out += "<line x1=\"\(f(x))\" y1=\"\(f(top))\" x2=\"\(f(x))\" y2=\"\(f(top + plotH))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(f(x))\" y=\"\(f(top + plotH + 14))\" text-anchor=\"middle\">\(label(d))</text>\n"
        }
        for d in stride(from: y0, through: y1, by: 1) {
            let y = top + plotH - (d - y0) / (y1 - y0) * plotH
            out += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotW))\" y2=\"\(f(y))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(label(d))</text>\n"
        }
        out += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotW))\" height=\"\(f(plotH))\" fill=\"none\" "
            + "stroke=\"#888\"/>\n"
        out += "<text x=\"\(f(left + plotW / 2))\" y=\"\(f(height - 8))\" text-anchor=\"middle\">devices of one "
            + "account (log)</text>\n"
        out += "<text transform=\"translate(14 \(f(top + plotH / 2))) rotate(-90)\" "
            + "text-anchor=\"middle\">\(Markup.text(yLabel)) (log)</text>\n"
        for (i, s) in series.enumerated() {
            let points = s.points.filter { $0.x > 0 && $0.y > 0 && $0.x.isFinite && $0.y.isFinite }
            if s.line && points.count > 1 {
                let path = points.map { "\(f(px($0.x))),\(f(py($0.y)))" }.joined(separator: " ")
                out += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"2\"/>\n"
            }
            for p in points {
                out += "<circle cx=\"\(f(px(p.x)))\" cy=\"\(f(py(p.y)))\" r=\"4\" "
                    + "fill=\"\(s.color)\"><title>\(Markup.text(s.name)): "
                out += "\(String(format: "%g", p.x)) devices, \(String(format: "%.3g", p.y))</title></circle>\n"
            }
            let ly = top + 8 + Double(i) * 18
            out += "<rect x=\"\(f(left + plotW + 12))\" y=\"\(f(ly))\" width=\"12\" height=\"12\" "
                + "fill=\"\(s.color)\"/>\n"
            out += "<text x=\"\(f(left + plotW + 30))\" y=\"\(f(ly + 10))\">\(Markup.text(s.name))</text>\n"
        }
        return out + "</svg>\n"
    }
}
