import Foundation
import LabKit
import Markup

/// The report's plots, as SVG: propagation latency by path (simulated and real), passes per trigger over time, data
/// age at each app open against the freshness budget, ops by status over time. The series are computed from the
/// events (`PlotData`); this type only draws.
struct Plots {
    let data: PlotData

    static let width = 600.0
    static let height = 260.0
    static let cdfPoints = 300
    static let margin = (left: 58.0, right: 12.0, top: 24.0, bottom: 40.0)

    var html: String {
        var s = "<div class=\"plots\">\n"
        s += cdf(
            title: "Propagation latency by path, simulated time (CDF)", series: data.propagationSim,
            unit: "simulated", ticks: Self.durationTicks, format: { formatSim($0) })
        s += cdf(
            title: "Propagation latency by path, real time (CDF)", series: data.propagationRealMs,
            unit: "real", ticks: Self.logTicks, format: { String(format: "%.0f ms", $0) })
        s += stacked(
            title: "Passes per trigger over time (simulated)", buckets: data.passBuckets,
            bucketSec: data.bucketSec, colours: Timeline.triggerColours)
        s += dataAge()
        s += stacked(
            title: "Ops by status over time (simulated)", buckets: data.statusBuckets, bucketSec: data.bucketSec,
            colours: PlotData.statusColours, lines: true)
        s += "</div>\n"
        return s
    }

    /// The plots that tell a lesson's halves apart: what woke the devices, and how old their data was at each open.
    var halfHTML: String {
        "<div class=\"plots\">\n" + stacked(
            title: "Passes per trigger over time (simulated)", buckets: data.passBuckets,
            bucketSec: data.bucketSec, colours: Timeline.triggerColours) + dataAge() + "</div>\n"
    }

    private var plotW: Double { Self.width - Self.margin.left - Self.margin.right }
    private var plotH: Double { Self.height - Self.margin.top - Self.margin.bottom }

    private func frame(_ title: String, cls: String) -> String {
        "<svg class=\"plot \(cls)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(Self.width))\" "
            + "height=\"\(Int(Self.height))\" "
            + "font-family=\"system-ui,sans-serif\" font-size=\"11\"><text x=\"\(Self.margin.left)\" y=\"15\" "
            + "font-weight=\"600\">"
            + "\(Markup.text(title))</text><rect x=\"\(Self.margin.left)\" y=\"\(Self.margin.top)\" width=\"\(plotW)\" "
            + "height=\"\(plotH)\" fill=\"#f8f9fa\" stroke=\"#dee2e6\"/>"
    }

    private func empty(_ title: String, _ why: String) -> String {
        frame(title, cls: "plot-empty")
            + "<text x=\"\(Self.margin.left + 12)\" y=\"\(Self.margin.top + 30)\" fill=\"#868e96\">"
            + "\(Markup.text(why))</text></svg>\n"
    }

    /// Ticks of a log axis from `lo` to `hi`: powers of ten and their 2 and 5.
    static func logTicks(_ lo: Double, _ hi: Double) -> [Double] {
        var ticks: [Double] = []
        var decade = pow(10, floor(log10(max(lo, 1e-3))))
        while decade <= hi * 10 && ticks.count < 40 {
            for m in [1.0, 2, 5] where decade * m >= lo && decade * m <= hi { ticks.append(decade * m) }
            decade *= 10
        }
        return ticks
    }

    /// Ticks of a log axis of simulated seconds, at round durations.
    static func durationTicks(_ lo: Double, _ hi: Double) -> [Double] {
        [1.0, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 18_000, 43_200, 86_400, 259_200, 604_800]
            .filter { $0 >= lo && $0 <= hi }
    }

    private func cdf(
        title: String, series: [String: [Double]], unit: String, ticks: (Double, Double) -> [Double],
        format: (Double) -> String
    ) -> String {
        let all = series.values.flatMap { $0 }.filter { $0 > 0 }
        guard let lo0 = all.min(), let hi0 = all.max() else { return empty(title, "no edit reached another device") }
        let lo = lo0 / 1.5
        let hi = hi0 * 1.5
        let m = Self.margin
        func x(_ v: Double) -> Double {
            m.left + (log10(max(v, lo)) - log10(lo)) / max(log10(hi) - log10(lo), 1e-9) * plotW
        }
        func y(_ f: Double) -> Double { m.top + plotH - f * plotH }
        var s = frame(title, cls: "plot-cdf")
        var marks = ticks(lo, hi)
        while marks.count > 8 { marks = marks.enumerated().filter { $0.offset % 2 == 0 }.map(\.element) }
        for t in marks {
            s +=
                "<line x1=\"\(svgNum(x(t)))\" x2=\"\(svgNum(x(t)))\" y1=\"\(m.top)\" y2=\"\(m.top + plotH)\" "
                    + "stroke=\"#e9ecef\"/>"
            s +=
                "<text x=\"\(svgNum(x(t)))\" y=\"\(m.top + plotH + 14)\" text-anchor=\"middle\" "
                    + "fill=\"#495057\">\(Markup.text(format(t)))</text>"
        }
        for f in [0.0, 0.5, 0.9, 1.0] {
            s +=
                "<text x=\"\(m.left - 6)\" y=\"\(svgNum(y(f) + 4))\" text-anchor=\"end\" "
                    + "fill=\"#495057\">\(Int(f * 100)) %</text>"
            s +=
                "<line x1=\"\(m.left)\" x2=\"\(m.left + plotW)\" y1=\"\(svgNum(y(f)))\" y2=\"\(svgNum(y(f)))\" "
                    + "stroke=\"#e9ecef\"/>"
        }
        s += "<text x=\"\(m.left + plotW / 2)\" y=\"\(Self.height - 6)\" text-anchor=\"middle\" fill=\"#495057\">"
        s += "saved on one device → applied on another (\(unit), log scale)</text>"
        var legendY = m.top + 14
        for path in series.keys.sorted() {
            let values = series[path]!.map { max($0, lo) }.sorted()
            guard !values.isEmpty else { continue }
            let colour = Timeline.triggerColours[path] ?? "#495057"
            var pts = "\(svgNum(x(values[0]))),\(svgNum(y(0)))"
            // At most `cdfPoints` steps a series: a big run's CDF is drawn through evenly spaced ranks.
            let stride = max(1, values.count / Self.cdfPoints)
            for i in Swift.stride(from: 0, to: values.count, by: stride) {
                let v = values[i]
                let next = min(i + stride, values.count)
                pts += " \(svgNum(x(v))),\(svgNum(y(Double(i) / Double(values.count))))"
                pts += " \(svgNum(x(v))),\(svgNum(y(Double(next) / Double(values.count))))"
            }
            s +=
                "<polyline class=\"series\" data-path=\"\(Markup.attribute(path))\" points=\"\(pts)\" fill=\"none\" "
                    + "stroke=\"\(colour)\" stroke-width=\"2\">"
            s +=
                "<title>\(Markup.text(path)): \(values.count) arrivals, median "
                    + "\(Markup.text(format(values[values.count / 2])))</title></polyline>"
            s += "<text x=\"\(m.left + plotW - 6)\" y=\"\(svgNum(legendY))\" text-anchor=\"end\" fill=\"\(colour)\">"
            s += "\(Markup.text(path)) (\(values.count))</text>"
            legendY += 13
        }
        return s + "</svg>\n"
    }

    private func timeAxis(_ s: inout String, buckets: Int, bucketSec: Double) {
        let m = Self.margin
        let span = Double(buckets) * bucketSec
        let step = Timeline.tickStep(span: span, pixels: plotW * 0.8)
        var t = 0.0
        while t <= span {
            let x = m.left + t / max(span, 1) * plotW
            s +=
                "<text x=\"\(svgNum(x))\" y=\"\(m.top + plotH + 14)\" text-anchor=\"middle\" "
                    + "fill=\"#495057\">\(formatSim(data.start + t))</text>"
            t += step
        }
    }

    private func stacked(
        title: String, buckets: [String: [Int]], bucketSec: Double, colours: [String: String],
        lines: Bool = false
    ) -> String {
        let names = buckets.keys.sorted()
        guard let count = buckets.values.first?.count, count > 0,
            buckets.values.contains(where: { $0.contains { $0 > 0 } })
        else { return empty(title, "nothing to count") }
        let m = Self.margin
        var totals = Array(repeating: 0, count: count)
        for name in names { for (i, v) in buckets[name]!.enumerated() { totals[i] += v } }
        let top = Double(max(totals.max() ?? 1, 1))
        let w = plotW / Double(count)
        var s = frame(title, cls: lines ? "plot-status" : "plot-passes")
        s += "<text x=\"\(m.left - 6)\" y=\"\(m.top + 4)\" text-anchor=\"end\" fill=\"#495057\">\(Int(top))</text>"
        s += "<text x=\"\(m.left - 6)\" y=\"\(m.top + plotH)\" text-anchor=\"end\" fill=\"#495057\">0</text>"
        timeAxis(&s, buckets: count, bucketSec: bucketSec)
        var base = Array(repeating: 0.0, count: count)
        for name in names {
            let colour = colours[name] ?? "#495057"
            for (i, v) in buckets[name]!.enumerated() where v > 0 {
                let h = Double(v) / top * plotH
                let y = m.top + plotH - base[i] - h
                s +=
                    "<rect x=\"\(svgNum(m.left + Double(i) * w))\" y=\"\(svgNum(y))\" "
                        + "width=\"\(svgNum(max(w - 0.5, 0.5)))\" "
                s +=
                    "height=\"\(svgNum(h))\" fill=\"\(colour)\"><title>\(Markup.text(name)): \(v) at "
                        + "\(formatSim(data.start + Double(i) * bucketSec))</title></rect>"
                base[i] += h
            }
        }
        var lx = m.left + 4
        for name in names where buckets[name]!.contains(where: { $0 > 0 }) {
            let colour = colours[name] ?? "#495057"
            s += "<rect x=\"\(svgNum(lx))\" y=\"\(Self.height - 14)\" width=\"9\" height=\"9\" fill=\"\(colour)\"/>"
            s += "<text x=\"\(svgNum(lx + 12))\" y=\"\(Self.height - 6)\" font-size=\"10\">\(Markup.text(name))</text>"
            lx += 18 + Double(name.count) * 5.6
        }
        return s + "</svg>\n"
    }

    private func dataAge() -> String {
        let title = "Data age at each app open (simulated), against the freshness budget"
        guard !data.ages.isEmpty else { return empty(title, "no app was opened during the scenario after a sync") }
        let m = Self.margin
        let top = max(data.ages.map(\.age).max() ?? 1, data.budgetSec * 1.2, 1)
        let span = max(data.end - data.start, 1)
        func x(_ t: Double) -> Double { m.left + (t - data.start) / span * plotW }
        func y(_ a: Double) -> Double { m.top + plotH - a / top * plotH }
        var s = frame(title, cls: "plot-age")
        s +=
            "<text x=\"\(m.left - 6)\" y=\"\(m.top + 4)\" text-anchor=\"end\" fill=\"#495057\">\(formatSim(top))</text>"
        s += "<text x=\"\(m.left - 6)\" y=\"\(m.top + plotH)\" text-anchor=\"end\" fill=\"#495057\">0</text>"
        let step = Timeline.tickStep(span: span, pixels: plotW * 0.8)
        var t = (data.start / step).rounded(.up) * step
        while t <= data.end {
            s +=
                "<text x=\"\(svgNum(x(t)))\" y=\"\(m.top + plotH + 14)\" text-anchor=\"middle\" "
                    + "fill=\"#495057\">\(formatSim(t))</text>"
            t += step
        }
        s += "<line class=\"budget\" x1=\"\(m.left)\" x2=\"\(m.left + plotW)\" y1=\"\(svgNum(y(data.budgetSec)))\" "
        s += "y2=\"\(svgNum(y(data.budgetSec)))\" stroke=\"#e03131\" stroke-dasharray=\"5,3\"/>"
        s +=
            "<text x=\"\(m.left + plotW - 4)\" y=\"\(svgNum(y(data.budgetSec) - 4))\" text-anchor=\"end\" "
                + "fill=\"#e03131\">"
        s += "budget \(formatSim(data.budgetSec))</text>"
        for age in data.ages {
            let over = age.age > data.budgetSec
            s +=
                "<circle cx=\"\(svgNum(x(age.sim)))\" cy=\"\(svgNum(y(age.age)))\" r=\"3\" "
                    + "fill=\"\(over ? "#e03131" : "#1971c2")\">"
            s +=
                "<title>\(Markup.text(age.device)) opened at \(formatSim(age.sim)): data \(formatSim(age.age)) "
                    + "old</title></circle>"
        }
        let over = data.ages.filter { $0.age > data.budgetSec }.count
        s += "<text x=\"\(m.left + plotW / 2)\" y=\"\(Self.height - 6)\" text-anchor=\"middle\" fill=\"#495057\">"
        s += "\(data.ages.count) opens, \(over) over the budget (red)</text>"
        return s + "</svg>\n"
    }
}

/// The series the plots draw, from a run's events.
struct PlotData {
    var start = 0.0
    var end = 0.0
    var bucketSec = 60.0
    var propagationSim: [String: [Double]] = [:]
    var propagationRealMs: [String: [Double]] = [:]
    var passBuckets: [String: [Int]] = [:]
    var statusBuckets: [String: [Int]] = [:]
    var ages: [(device: String, sim: Double, age: Double)] = []
    var budgetSec = 3600.0

    static let statusColours: [String: String] = [
        "waitingToSend": "#fab005", "sending": "#4dabf7", "confirmationDelayed": "#e8590c", "completed": "#51cf66",
        "needsAttention": "#c92a2a",
    ]

    init(
        events: [Event], devices: Set<String>, lineages: [Lineage], budgetSec: Double, scenarioEnd: Double,
        buckets: Int = 60
    ) {
        self.budgetSec = budgetSec
        end = max(events.map(\.sim).max() ?? 0, 1)
        bucketSec = max((end - start) / Double(buckets), 1)
        for lineage in lineages {
            for arrival in lineage.arrivals {
                propagationSim[arrival.trigger, default: []].append(arrival.simSec)
                propagationRealMs[arrival.trigger, default: []].append(arrival.realMs)
            }
        }
        let count = Int(((end - start) / bucketSec).rounded(.up)) + 1
        func index(_ sim: Double) -> Int { min(count - 1, max(0, Int((sim - start) / bucketSec))) }
        var lastSynced: [String: Double] = [:]
        var status: [String: String] = [:]
        var changes: [(Int, String, String?)] = []  // bucket, key, new status
        for event in events where devices.contains(event.proc) {
            switch event.type {
            case EventCatalogue.passStart where event.sim >= start:
                let trigger = event.string("trigger") ?? "?"
                passBuckets[trigger, default: Array(repeating: 0, count: count)][index(event.sim)] += 1
            case EventCatalogue.passEnd:
                if event["cutOff"]?.boolValue != true { lastSynced[event.proc] = event.sim }
            case EventCatalogue.appForeground where event.sim >= start && event.sim <= scenarioEnd:
                if let synced = lastSynced[event.proc] { ages.append((event.proc, event.sim, event.sim - synced)) }
            case EventCatalogue.opSaved:
                if let key = event.string("key") { changes.append((index(event.sim), key, "waitingToSend")) }
            case EventCatalogue.opSent:
                if let key = event.string("key") { changes.append((index(event.sim), key, "sending")) }
            case EventCatalogue.opResult:
                guard let key = event.string("key") else { continue }
                let next: String
                switch event.string("outcome") {
                case "acknowledged": next = "completed"
                case "unknown": next = "confirmationDelayed"
                case "needsAttention": next = "needsAttention"
                default: next = "waitingToSend"
                }
                changes.append((index(event.sim), key, next))
            default:
                break
            }
        }
        // Ops by status at the end of each bucket.
        changes = changes.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
        var cursor = 0
        var tally: [String: Int] = [:]
        for name in Self.statusColours.keys { statusBuckets[name] = Array(repeating: 0, count: count) }
        for bucket in 0..<count {
            while cursor < changes.count && changes[cursor].0 <= bucket {
                let (_, key, next) = changes[cursor]
                if let old = status[key] { tally[old, default: 0] -= 1 }
                if let next {
                    status[key] = next
                    tally[next, default: 0] += 1
                }
                cursor += 1
            }
            for (name, value) in tally where value > 0 { statusBuckets[name]?[bucket] = value }
        }
    }
}
