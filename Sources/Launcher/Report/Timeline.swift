import Foundation
import Markup

/// Draws a `TimelineModel` as one self-contained SVG with a little inline script (zoom with the wheel or the buttons,
/// drag to pan, click a mark to follow its edit). Every element placed in time carries `data-t` (and `data-t2`), so
/// the script can move it; the SVG is complete without the script (a screenshot, a browser with scripts off).
struct Timeline {
    let model: TimelineModel

    static let width = 1240.0
    static let left = 160.0
    static let right = 12.0
    static var plot: Double { width - left - right }
    static let axisHeight = 26.0

    static let triggerColours: [String: String] = [
        "push": "#d9480f", "foreground": "#2b8a3e", "local-edit": "#1971c2", "connectivity": "#862e9c",
        "periodic": "#e67700", "opportunistic": "#0c8599", "interval": "#5c940d", "visibility": "#a61e4d",
        "manual": "#868e96",
    ]

    static let bandStyles: [TimelineModel.BandKind: (fill: String, opacity: Double)] = [
        .foreground: ("#8ce99a", 1), .background: ("#a5d8ff", 1), .closed: ("#ced4da", 1), .forceQuit: ("#e03131", 1),
        .offline: ("#ffa8a8", 0.55), .doze: ("#b197fc", 0.35), .charging: ("#fab005", 1), .window: ("#66d9e8", 0.6),
        .down: ("#c92a2a", 0.45),
        .paused: ("#f59f00", 0.45), .fault: ("#e8590c", 0.3), .startup: ("#e9ecef", 0.8), .heal: ("#d3f9d8", 0.6),
        .quiesce: ("#fff3bf", 0.7), .partition: ("#495057", 0.18),
    ]

    struct Row {
        let lane: TimelineModel.Lane
        let top: Double
        let height: Double
    }

    var rows: [Row] {
        var y = Self.axisHeight
        return model.lanes.map { lane in
            let height: Double
            switch lane.kind {
            case .server, .broker: height = 44
            case .device: height = 62
            case .aggregate: height = 40
            }
            defer { y += height + 6 }
            return Row(lane: lane, top: y, height: height)
        }
    }

    var height: Double { (rows.last.map { $0.top + $0.height } ?? Self.axisHeight) + 8 }

    func x(_ t: Double) -> Double {
        let span = max(model.end - model.start, 1)
        return Self.left + (t - model.start) / span * Self.plot
    }

    /// The middle of a lane's event strip, where marks and arrows sit.
    func markY(_ row: Row) -> Double {
        switch row.lane.kind {
        case .device: return row.top + 22
        default: return row.top + row.height / 2
        }
    }

    var svg: String {
        let rows = self.rows
        let rowOf = Dictionary(rows.map { ($0.lane.id, $0) }, uniquingKeysWith: { a, _ in a })
        var s = "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(Self.width))\" "
        s += "height=\"\(Int(height))\" viewBox=\"0 0 \(Int(Self.width)) \(Int(height))\" "
        s +=
            "data-left=\"\(Self.left)\" data-plot=\"\(Self.plot)\" data-t0=\"\(svgNum(model.start))\" "
                + "data-t1=\"\(svgNum(model.end))\" "
        s += "data-lanes=\"\(rows.count)\" font-family=\"system-ui,sans-serif\" font-size=\"11\">\n"
        s +=
            "<defs><clipPath id=\"tl-clip\"><rect x=\"\(Self.left)\" y=\"0\" width=\"\(Self.plot)\" "
                + "height=\"\(Int(height))\"/>"
        s += "</clipPath>"
        for (kind, colour) in Self.linkColours {
            s +=
                "<marker id=\"arrow-\(kind)\" viewBox=\"0 0 6 6\" refX=\"6\" refY=\"3\" markerWidth=\"6\" "
                    + "markerHeight=\"6\" "
            s += "orient=\"auto\"><path d=\"M0,0L6,3L0,6z\" fill=\"\(colour)\"/></marker>"
        }
        // One shape per kind of mark, used by every mark of that kind; links and passes styled by class: a week's
        // run draws thousands of each.
        for kind in Self.markKinds { s += "<g id=\"m-\(kind.rawValue)\">\(shape(kind, focused: false))</g>" }
        s += "</defs>\n<style>\(Self.svgStyle)</style>\n"
        // Lane backgrounds and labels.
        for (index, row) in rows.enumerated() {
            let focused = model.focus.contains(row.lane.id)
            s += "<g class=\"lane\" data-lane=\"\(Markup.attribute(row.lane.id))\">"
            s += "<rect x=\"0\" y=\"\(svgNum(row.top))\" width=\"\(Int(Self.width))\" height=\"\(svgNum(row.height))\" "
            // A lane a failed check names (a product check names devices, not marks) is ringed in red.
            s += "fill=\"\(index % 2 == 0 ? "#f8f9fa" : "#ffffff")\"\(focused ? Self.laneRing : "")/>"
            s += "<text x=\"6\" y=\"\(svgNum(row.top + 15))\" font-weight=\"600\"\(focused ? " fill=\"#c92a2a\"" : "")>"
            s += "\(Markup.text(row.lane.label))</text>"
            if case .device = row.lane.kind {
                s +=
                    "<text x=\"6\" y=\"\(svgNum(row.top + 54))\" fill=\"#868e96\" font-size=\"10\">cursor / head</text>"
            }
            if case .aggregate = row.lane.kind {
                s +=
                    "<text x=\"6\" y=\"\(svgNum(row.top + 30))\" fill=\"#868e96\" font-size=\"10\">passes summed</text>"
            }
            s += "</g>\n"
        }
        s += "<g clip-path=\"url(#tl-clip)\">\n"
        // Phases across every lane.
        for band in model.bands where band.lane == nil {
            let style = Self.bandStyles[band.kind]!
            s += rect(
                band.start, band.end, y: Self.axisHeight, h: height - Self.axisHeight - 8, fill: style.fill,
                opacity: style.opacity, cls: "band band-\(band.kind.rawValue)", title: band.label)
        }
        // Words written on a lane skip a place where earlier words of the same row would be overwritten.
        var textEnd: [String: Double] = [:]
        func fits(_ row: String, _ at: Double, _ text: String, size: Double = 10) -> Bool {
            let width = Double(text.count) * size * 0.56 + 6
            if let end = textEnd[row], end > at { return false }
            textEnd[row] = at + width
            return true
        }
        // Bands of each lane: app state as a strip at the top of a device lane, the rest over the event strip.
        for band in model.bands {
            guard let lane = band.lane, let row = rowOf[lane] else { continue }
            let style = Self.bandStyles[band.kind]!
            let (y, h): (Double, Double)
            switch band.kind {
            case .foreground, .background, .closed, .forceQuit: (y, h) = (row.top + 3, 7)
            case .window: (y, h) = (row.top + 34, 4)
            case .charging: (y, h) = (row.top + 38, 2)
            default:
                if case .device = row.lane.kind {
                    (y, h) = (row.top + 10, 28)
                } else {
                    (y, h) = (row.top + 2, row.height - 4)
                }
            }
            let label = "\(band.label): \(formatSim(band.start)) – \(formatSim(band.end))"
            s += rect(
                band.start, band.end, y: y, h: h, fill: style.fill, opacity: style.opacity,
                cls: "band band-\(band.kind.rawValue)", title: label, lane: lane)
            let text: String
            switch band.kind {
            case .fault: text = band.label
            case .down, .paused, .offline:
                text =
                    "\(band.kind == .down ? "down" : band.kind.rawValue) "
                        + "\(formatSim(band.start))–\(formatSim(band.end))"
            default: text = band.label.components(separatedBy: " (").first ?? band.label
            }
            if [.down, .paused, .offline, .fault].contains(band.kind), x(band.end) - x(band.start) > 30,
                fits("\(lane)/band", x(band.start), text)
            {
                let textY: Double
                if case .device = row.lane.kind { textY = y + min(h, 24) - 3 } else { textY = y + h - 4 }
                s +=
                    "<text data-t=\"\(svgNum(band.start))\" data-dx=\"3\" x=\"\(svgNum(x(band.start) + 3))\" "
                        + "y=\"\(svgNum(textY))\" "
                s +=
                    "font-size=\"10\" fill=\"#5c1a1a\" stroke=\"#fff\" stroke-width=\"3\" "
                        + "paint-order=\"stroke\">\(Markup.text(text))</text>\n"
            }
        }
        // Passes: a small bar per pass, coloured by its trigger.
        for pass in model.passes {
            guard let row = rowOf[pass.lane] else { continue }
            let title =
                "pass by \(pass.trigger) \(formatSim(pass.start)) – "
                    + "\(formatSim(pass.end))\(pass.cutOff ? " (cut off)" : "")"
            s += rect(
                pass.start, max(pass.end, pass.start), y: row.top + 28, h: 6, fill: nil, opacity: 1,
                cls: "pass pass-\(pass.trigger)", title: title, lane: pass.lane, minWidth: 2)
        }
        // Aggregate lanes: passes per bucket as bars.
        for aggregate in model.aggregates {
            guard let row = rowOf[aggregate.lane] else { continue }
            let top = aggregate.passes.max() ?? 0
            for (index, count) in aggregate.passes.enumerated() where count > 0 {
                let t = model.start + Double(index) * aggregate.bucketSec
                let h = (row.height - 8) * Double(count) / Double(max(top, 1))
                let offline = aggregate.offline[index]
                let title = "\(count) passes\(offline > 0 ? ", \(offline) went offline" : "") from \(formatSim(t))"
                s += rect(
                    t, t + aggregate.bucketSec, y: row.top + row.height - 4 - h, h: h, fill: "#74c0fc", opacity: 1,
                    cls: "aggregate", title: title, lane: aggregate.lane)
            }
        }
        // Cursor against head.
        for line in model.cursors {
            guard let row = rowOf[line.lane] else { continue }
            let maxHead = max(line.head.last?.value ?? 0, line.cursor.map(\.value).max() ?? 0, 1)
            let base = row.top + row.height - 3
            let span = 18.0
            func points(_ steps: [(sim: Double, value: Int)]) -> [(Double, Double)] {
                var out: [(Double, Double)] = [(model.start, base)]
                var last = 0
                for step in steps where step.sim >= model.start {
                    out.append((step.sim, base - span * Double(last) / Double(maxHead)))
                    last = step.value
                    out.append((step.sim, base - span * Double(last) / Double(maxHead)))
                }
                out.append((model.end, base - span * Double(last) / Double(maxHead)))
                return out
            }
            s += polyline(
                points(line.head), stroke: "#adb5bd", width: 3, cls: "head", title: "\(line.lane)'s account head")
            s += polyline(
                points(line.cursor), stroke: "#1864ab", width: 1.5, cls: "cursor",
                title: "\(line.lane)'s cursor (head \(line.head.last?.value ?? 0))")
        }
        // Arrows of each edit's lineage.
        for link in model.links {
            guard let from = rowOf[link.fromLane], let to = rowOf[link.toLane] else { continue }
            let focused = model.focused(link.keys)
            s +=
                "<line class=\"link link-\(link.kind.rawValue)\(focused ? " focus" : "")\" "
                    + "data-keys=\"\(Markup.attribute(link.keys.joined(separator: " ")))\" "
            s +=
                "data-t=\"\(svgNum(link.fromSim))\" data-t2=\"\(svgNum(link.toSim))\" "
                    + "x1=\"\(svgNum(x(link.fromSim)))\" y1=\"\(svgNum(markY(from)))\" "
            s +=
                "x2=\"\(svgNum(x(link.toSim)))\" "
                    + "y2=\"\(svgNum(markY(to)))\"><title>\(Markup.text(link.label))</title></line>\n"
        }
        s += budgetLines(rowOf)
        // Marks.
        let labelDead = model.marks.filter { $0.kind == .hintDied || $0.kind == .hintIgnored }.count <= 40
        for mark in model.marks {
            guard let row = rowOf[mark.lane] else { continue }
            let focused = model.focused(mark.keys)
            var y = markY(row)
            if mark.kind == .step { y = row.top + 6 }
            if mark.kind == .switchEvent { y = row.top + 15 }
            s +=
                "<g class=\"mark mark-\(mark.kind.rawValue)\(focused ? " focus" : "")\" "
                    + "data-lane=\"\(Markup.attribute(mark.lane))\" "
            s +=
                "data-keys=\"\(Markup.attribute(mark.keys.joined(separator: " ")))\" data-t=\"\(svgNum(mark.sim))\" "
                    + "data-y=\"\(svgNum(y))\" "
            s +=
                "transform=\"translate(\(svgNum(x(mark.sim))),\(svgNum(y)))\">"
                    + "<title>\(Markup.text(formatSim(mark.sim) + "  " + mark.label))</title>"
            s += (focused ? Self.ring : "") + "<use href=\"#m-\(mark.kind.rawValue)\"/>"
            if mark.kind == .hintDied || mark.kind == .hintIgnored, labelDead, let reason = mark.reason,
                fits("\(mark.lane)/\(mark.kind.rawValue)", x(mark.sim), short(reason), size: 9)
            {
                s +=
                    "<text x=\"4\" y=\"\(mark.kind == .hintDied ? -6 : 14)\" font-size=\"9\" "
                        + "fill=\"#c92a2a\">\(Markup.text(short(reason)))</text>"
            }
            if mark.kind == .switchEvent, fits("\(mark.lane)/switch", x(mark.sim), mark.reason ?? "", size: 9) {
                s += Self.switchLabel(mark.reason ?? "")
            }
            if mark.kind == .step, Self.faultSteps.contains(where: { mark.label.contains(" \($0) ") }),
                fits("\(mark.lane)/step", x(mark.sim), mark.label)
            {
                s +=
                    "<text x=\"4\" y=\"4\" font-size=\"10\" font-weight=\"600\" fill=\"#212529\" stroke=\"#fff\" "
                        + "stroke-width=\"3\" paint-order=\"stroke\">"
                s += "\(Markup.text(mark.label))</text>"
            }
            s += "</g>\n"
        }
        s += "</g>\n"
        s += axis()
        s += "</svg>\n"
        return s
    }

    /// Scenario steps that get their words written on the lane (the others only a tick and a tooltip).
    static let faultSteps = ["kill", "restart", "pause", "resume", "offline", "online", "forceQuit", "chaos", "faults"]

    private func short(_ reason: String) -> String {
        reason.count <= 28 ? reason : String(reason.prefix(26)) + "…"
    }

    static let ring = "<circle r=\"8\" fill=\"none\" stroke=\"#e03131\" stroke-width=\"2.5\"/>"

    static let markKinds: [TimelineModel.MarkKind] = [
        .saved, .sent, .applied, .hintAccepted, .hintDelivered, .hintDied, .hintDuplicated, .hintReceived, .hintIgnored,
        .changeApplied, .step, .unknownOutcome, .needsAttention, .switchEvent,
    ]

    /// How links and passes look, by class.
    static var svgStyle: String {
        var css = ".link{stroke-width:1;stroke-opacity:.45}.link.focus{stroke-width:2.5;stroke-opacity:1}"
        css += ".link-repair{stroke-dasharray:4,3;stroke-opacity:.9}"
        for (kind, colour) in linkColours { css += ".link-\(kind){stroke:\(colour);marker-end:url(#arrow-\(kind))}" }
        css += ".pass{fill:#495057;fill-opacity:.9}"
        for trigger in triggerColours.keys.sorted() { css += ".pass-\(trigger){fill:\(triggerColours[trigger]!)}" }
        return css
    }

    static let linkColours: [(String, String)] = [
        ("send", "#1971c2"), ("notice", "#495057"), ("hint", "#d9480f"), ("pull", "#2b8a3e"), ("repair", "#7048e8"),
    ]

    private func shape(_ kind: TimelineModel.MarkKind, focused: Bool) -> String {
        let ring = focused ? Self.ring : ""
        switch kind {
        case .saved: return ring + "<circle r=\"4\" fill=\"#1971c2\" stroke=\"#fff\"/>"
        case .sent: return ring + "<path d=\"M0,-4V4\" stroke=\"#1971c2\" stroke-width=\"1.5\"/>"
        case .applied: return ring + "<rect x=\"-3.5\" y=\"-3.5\" width=\"7\" height=\"7\" fill=\"#212529\"/>"
        case .hintAccepted: return ring + "<circle r=\"2\" fill=\"#495057\"/>"
        case .hintDelivered: return ring + "<circle r=\"2\" fill=\"#d9480f\"/>"
        case .hintDied:
            return ring + "<path d=\"M-4,-4L4,4M4,-4L-4,4\" stroke=\"#e03131\" stroke-width=\"2\"/>"
        case .hintDuplicated:
            return ring
                + "<circle r=\"3\" fill=\"none\" stroke=\"#d9480f\"/><circle r=\"6\" fill=\"none\" stroke=\"#d9480f\"/>"
        case .hintReceived: return ring + "<path d=\"M-4,-5L4,-5L0,1z\" fill=\"#d9480f\"/>"
        case .hintIgnored:
            return ring + "<circle r=\"4.5\" fill=\"#fff\" stroke=\"#e8590c\" stroke-width=\"1.5\"/>"
                + "<path d=\"M-3,3L3,-3\" stroke=\"#e8590c\" stroke-width=\"1.5\"/>"
        case .changeApplied: return ring + "<path d=\"M0,-5L5,0L0,5L-5,0z\" fill=\"#2b8a3e\"/>"
        case .step: return ring + "<path d=\"M-4,-4L4,-4L0,2z\" fill=\"#343a40\"/>"
        case .unknownOutcome:
            return ring + "<circle r=\"5\" fill=\"#fff\" stroke=\"#e8590c\" stroke-width=\"1.5\"/>"
                + "<text y=\"3.5\" text-anchor=\"middle\" font-size=\"9\" font-weight=\"700\" fill=\"#e8590c\">?</text>"
        case .needsAttention:
            return ring + "<circle r=\"5\" fill=\"#c92a2a\"/>"
                + "<text y=\"3.5\" text-anchor=\"middle\" font-size=\"9\" font-weight=\"700\" fill=\"#fff\">!</text>"
        case .switchEvent: return ring + Self.switchShape
        }
    }

    private func axis() -> String {
        let step = Self.tickStep(span: model.end - model.start, pixels: Self.plot)
        var s = "<g id=\"tl-axis\">"
        s += "<rect x=\"0\" y=\"0\" width=\"\(Int(Self.width))\" height=\"\(Self.axisHeight - 4)\" fill=\"#fff\"/>"
        s += "<text x=\"6\" y=\"15\" fill=\"#495057\">simulated time →</text>"
        var t = (model.start / step).rounded(.up) * step
        while t <= model.end {
            s += "<g data-t=\"\(svgNum(t))\" data-y=\"0\" transform=\"translate(\(svgNum(x(t))),0)\">"
            s += "<line y1=\"18\" y2=\"\(svgNum(height - 8))\" stroke=\"#dee2e6\" stroke-dasharray=\"2,3\"/>"
            s += "<text y=\"14\" text-anchor=\"middle\" fill=\"#495057\">\(formatSim(t))</text></g>"
            t += step
        }
        s += "</g>\n"
        return s
    }

    /// A round tick step (seconds) that puts ticks about 90 px apart.
    static func tickStep(span: Double, pixels: Double) -> Double {
        let want = max(span, 1) / max(pixels / 90, 1)
        let steps: [Double] = [
            1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200,
            86_400, 172_800, 604_800,
        ]
        return steps.first { $0 >= want } ?? steps.last!
    }

    private func rect(
        _ t0: Double, _ t1: Double, y: Double, h: Double, fill: String?, opacity: Double, cls: String,
        title: String, lane: String? = nil, minWidth: Double = 1
    ) -> String {
        let width = max(minWidth, x(t1) - x(t0))
        return Element("rect", ["class": cls]).attribute("data-lane", lane)
            .attribute("data-t", svgNum(t0)).attribute("data-t2", svgNum(t1))
            .attribute("data-min", minWidth != 1 ? svgNum(minWidth) : nil)
            .attribute("x", svgNum(x(t0))).attribute("y", svgNum(y))
            .attribute("width", svgNum(width)).attribute("height", svgNum(h))
            .attribute("fill", fill).attribute("fill-opacity", opacity < 1 ? "\(opacity)" : nil)
            .child(Element("title").text(title)).render() + "\n"
    }

    private func polyline(_ points: [(Double, Double)], stroke: String, width: Double, cls: String, title: String)
        -> String
    {
        let pts = points.map { "\(svgNum(x($0.0))),\(svgNum($0.1))" }.joined(separator: " ")
        let times = points.map { "\(svgNum($0.0)),\(svgNum($0.1))" }.joined(separator: " ")
        let line = Element("polyline", [
            "class": cls, "data-pts": times, "points": pts, "fill": "none", "stroke": stroke,
            "stroke-width": "\(width)",
        ])
        return line.child(Element("title").text(title)).render() + "\n"
    }

    /// The legend under the timeline.
    var legend: String {
        var s = "<div class=\"legend\">"
        let bands: [(TimelineModel.BandKind, String)] = [
            (.foreground, "foreground"), (.background, "background"), (.closed, "closed"), (.forceQuit, "force-quit"),
            (.offline, "offline"), (.doze, "doze"), (.charging, "charging"), (.window, "iOS window / doze maintenance"),
            (.down, "process down"),
            (.paused, "paused"), (.fault, "chaos or server faults on"), (.startup, "start-up"), (.heal, "heal phase"),
            (.quiesce, "quiesce phase"), (.partition, "network partition between hosts"),
        ]
        for (kind, label) in bands {
            let style = Self.bandStyles[kind]!
            s += "<span><i style=\"background:\(style.fill);opacity:\(max(style.opacity, 0.6))\"></i>\(label)</span>"
        }
        s += "<br>"
        for trigger in Self.triggerColours.keys.sorted() {
            s += "<span><i style=\"background:\(Self.triggerColours[trigger]!)\"></i>pass by \(trigger)</span>"
        }
        s += "<br>"
        let marks: [(TimelineModel.MarkKind, String)] = [
            (.saved, "op saved"), (.sent, "op sent"), (.applied, "applied on the server"),
            (.hintReceived, "hint received"), (.hintIgnored, "hint received but ignored"),
            (.hintDied, "hint died (reason beside)"), (.hintDuplicated, "duplicate"),
            (.changeApplied, "change applied on another device"), (.step, "scenario step"),
            (.unknownOutcome, "no reply: outcome unknown"), (.needsAttention, "op needs attention"),
            (.switchEvent, "what a design switch or a platform limit did (its event beside)"),
        ]
        for (kind, label) in marks {
            s +=
                "<span><svg width=\"16\" height=\"14\"><g "
                    + "transform=\"translate(8,8)\">\(shape(kind, focused: false))</g></svg>\(label)</span>"
        }
        s +=
            "<div>arrows: <b style=\"color:#1971c2\">op sent → applied</b>, <b style=\"color:#495057\">notice → "
                + "broker</b>, "
        s += "<b style=\"color:#d9480f\">hint → device</b>, <b style=\"color:#2b8a3e\">change pulled by a pass</b>, "
        s += "<b style=\"color:#7048e8\">- - lost or ignored hint → where its edit reached the device anyway</b>; "
        s += "under each device, its cursor (blue) against its account's head (grey)</div>"
        s += "</div>\n"
        return s
    }
}

/// A number for an SVG attribute: two decimals at most.
func svgNum(_ value: Double) -> String {
    let rounded = (value * 100).rounded() / 100
    return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
}
