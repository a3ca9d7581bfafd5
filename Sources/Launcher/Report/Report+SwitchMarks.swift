import Foundation
import LabKit
import Markup
import SyncProtocol

/// The switch and platform-limit events (`SwitchEvents`) on the page: a flag on the device's lane with its words on
/// hover, and a count per device in report.md, report.html and report.json (`switchEvents`).
extension TimelineModel {
    /// One flag per event, on the lane of the device it is about (a device summed in an aggregate lane has none:
    /// its count is in the table). The mark's `reason` holds the kind, written beside the flag where it fits.
    static func switchMarks(events: [Event], devices: Set<String>, lanes: Set<String>) -> [Mark] {
        SwitchEvents(events: events, devices: devices).occurrences.compactMap { o in
            guard lanes.contains(o.device) else { return nil }
            return Mark(lane: o.device, sim: o.sim, kind: .switchEvent, label: o.words, keys: [o.device, o.kind],
                        reason: o.kind)
        }
    }
}

extension TimelineModel {
    /// The budget factor of each lane that reported one, as steps from 1 at the start.
    static func budgetSteps(events: [Event], lanes: Set<String>) -> [String: [(sim: Double, value: Double)]] {
        var out: [String: [(sim: Double, value: Double)]] = [:]
        for e in events where (e.type == EventCatalogue.budgetShrunk || e.type == EventCatalogue.budgetRecovered)
            && lanes.contains(e.proc) {
            guard let to = e["to"]?.doubleValue else { continue }
            out[e.proc, default: []].append((e.sim, to))
        }
        return out
    }
}

extension Timeline {
    /// An iOS lane's budget: a magenta step line across the lane's event strip, full height at 1 (the whole budget),
    /// lower as the system shrinks it after killed tasks; its value on hover.
    func budgetLines(_ rowOf: [String: Row]) -> String {
        var s = ""
        for lane in model.budgets.keys.sorted() {
            guard let row = rowOf[lane], let steps = model.budgets[lane], !steps.isEmpty else { continue }
            let top = row.top + 12.0
            let span = 22.0
            func y(_ v: Double) -> Double { top + span * (1 - min(max(v, 0), 1)) }
            // (time, y) pairs: `points` for the whole run, `data-pts` for the page's zoom.
            var pairs: [(Double, Double)] = [(model.start, y(1))]
            var last = 1.0
            for step in steps {
                pairs += [(step.sim, y(last)), (step.sim, y(step.value))]
                last = step.value
            }
            pairs.append((model.end, y(last)))
            let points = pairs.map { "\(svgNum(x($0.0))),\(svgNum($0.1))" }.joined(separator: " ")
            let times = pairs.map { "\(svgNum($0.0)),\(svgNum($0.1))" }.joined(separator: " ")
            let words = steps.map { "\(formatSim($0.sim)) ×\(format($0.value))" }.joined(separator: ", ")
            s += "<polyline class=\"budget\" data-lane=\"\(Markup.attribute(lane))\" data-pts=\"\(times)\" "
                + "points=\"\(points)\" fill=\"none\" "
                + "stroke=\"#ae3ec9\" stroke-width=\"1.2\" stroke-dasharray=\"3,2\"><title>iOS background budget "
                + "(1 = the whole): \(Markup.text(words))</title></polyline>\n"
        }
        return s
    }

    /// A small magenta flag.
    static let switchShape = "<path d=\"M-2,6V-6\" stroke=\"#ae3ec9\" stroke-width=\"1.5\"/>"
        + "<path d=\"M-2,-6L6,-3L-2,0z\" fill=\"#ae3ec9\"/>"

    /// The outline of a lane a failed check names.
    static let laneRing = " class=\"lane-ring\" stroke=\"#e03131\" stroke-width=\"2.5\""

    /// The kind of a flag, written beside it.
    static func switchLabel(_ kind: String) -> String {
        "<text x=\"7\" y=\"-2\" font-size=\"9\" fill=\"#862e9c\" stroke=\"#fff\" stroke-width=\"2.5\" "
            + "paint-order=\"stroke\">\(Markup.text(kind))</text>"
    }
}

extension Report {
    var switchEvents: SwitchEvents { SwitchEvents(events: data.events, devices: Set(data.devices.map(\.id))) }

    /// report.json's `switchEvents`: device (or `server`/`broker`) → kind → count; devices with none are left out.
    var switchEventsJSON: JSONValue {
        let counts = switchEvents.counts
        return .object(counts.keys.sorted().map { device in
            (device, .object(counts[device]!.keys.sorted().map { ($0, .int(counts[device]![$0]!)) }))
        })
    }

    /// The report's table: one row per device and kind, with the switch or limit behind it.
    var switchEventsBlocks: [Block] {
        let events = switchEvents
        let counts = events.counts
        guard !counts.isEmpty else { return [] }
        var table = Table(["device", "event", "count", "first", "emitted by"])
        let order = data.devices.map(\.id) + ["server", "broker"]
        var rows = 0
        for device in order {
            guard let kinds = counts[device] else { continue }
            for kind in events.kindsSeen where kinds[kind] != nil {
                rows += 1
                guard rows <= Self.devicesListed * 2 else { continue }
                let first = events.occurrences.first { $0.device == device && $0.kind == kind }
                table.add([Table.Cell(device), .code(kind), Self.cell(kinds[kind]!),
                           Table.Cell(first.map { formatSim($0.sim) } ?? "—"),
                           Table.Cell(SwitchEvents.cause(of: kind)?.words ?? "—")])
            }
        }
        if rows > Self.devicesListed * 2 {
            table.add([Table.Cell([.text("… \(rows - Self.devicesListed * 2) more rows (report.json "),
                                   .code("switchEvents"), .text(")")]), "", "", "", ""])
        }
        return Block.section("Switch and platform-limit events", "What a design switch (or a platform's limit) did, "
            + "per device: the cause the checks above see only by its effect. Each is a flag on the device's lane of "
            + "the timeline, its words on hover; `grep` events.jsonl for the fields.", table)
    }
}
