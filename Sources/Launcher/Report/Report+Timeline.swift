import Foundation
import LabKit
import Markup
import SyncDevice

/// The pictures of report.html (the timeline, the plots, the failing checks linked to the timeline) and the lists
/// of what needs a reader's attention (ops that need attention, hints that died, by reason).
extension Report {
    /// Devices as the timeline needs them, from the topology the run used.
    var timelineDevices: [TimelineModel.DeviceInfo] {
        let pools = data.topology.poolAssignment
        return data.topology.accounts.flatMap { account in
            account.devices.map {
                TimelineModel.DeviceInfo(
                    id: $0.id, account: account.id, platform: $0.platform.rawValue, start: $0.start.rawValue,
                    host: pools[$0.id] ?? $0.id, charging: $0.charging)
            }
        }
    }

    /// The server's faults from its flags (the topology's `server` block), as a band label, or nil when none.
    var serverFlagFaults: String? {
        // Every runtime knob of the server's table (ServerSettings+Knobs.swift) set off its default.
        let parts = data.topology.server.runtimeLabels
        return parts.isEmpty ? nil : "faults (flags): " + parts.joined(separator: ", ")
    }

    /// What a failed invariant's counter-example is about: its own `focus`, else every op key, hint id, device and
    /// draft its detail names.
    func focus(of result: InvariantResult) -> [String] {
        if !result.focus.isEmpty { return result.focus }
        let known = knownNames
        let words = result.detail.split(whereSeparator: { " ,;:()\"'=≠".contains($0) }).map(String.init)
        var out: [String] = []
        for word in words where known.contains(word) && !out.contains(word) { out.append(word) }
        // A check that names no op, hint or draft (a product check: devices and their opens) rings every device its
        // counter-examples are about, not only the first its detail names.
        let devices = Set(data.devices.map(\.id))
        if out.allSatisfy(devices.contains) {
            for device in result.violations.compactMap(\.device) where devices.contains(device) {
                if !out.contains(device) { out.append(device) }
            }
        }
        return out
    }

    /// Every op key, hint id, device and draft of the run.
    var knownNames: Set<String> {
        var names = Set(data.devices.map(\.id))
        for event in data.events {
            switch event.type {
            case EventCatalogue.opSaved:
                if let key = event.string("key") { names.insert(key) }
                if let draft = event.string("draft") { names.insert(draft) }
            case EventCatalogue.hintAccepted:
                if let hint = event.string("hint") { names.insert(hint) }
            default:
                break
            }
        }
        return names
    }

    /// The first moment on the timeline of anything in `focus`.
    func firstMoment(of focus: [String], in model: TimelineModel) -> Double? {
        let set = Set(focus)
        let marks = model.marks.filter { $0.keys.contains(where: set.contains) }.map(\.sim)
        return marks.min()
    }

    /// The timeline section of report.html.
    var timelineHTML: String { timelineHTML(clockEnd: nil) }

    /// The run's last moment on the timeline: `synclab compare` draws two runs on the clock of the longer.
    var timelineEnd: Double { max(data.events.map(\.sim).max() ?? 0, 0) }

    /// The timeline section, its clock running to `clockEnd` when that is later than the run's own end.
    func timelineHTML(clockEnd: Double?) -> String {
        // Invariants and product checks alike: a lesson's broken half may fail only a product check.
        let failed = (invariants + checks).filter { !$0.held }
        var focus = Set<String>()
        for result in failed { focus.formUnion(self.focus(of: result)) }
        var model = TimelineModel(
            events: data.events, devices: timelineDevices, focus: focus, serverFlags: serverFlagFaults)
        if let clockEnd { model.end = max(model.end, clockEnd) }
        let timeline = Timeline(model: model)
        var s = "<h2>Timeline</h2>\n"
        s +=
            "<p class=\"rules\">Simulated time runs left to right, from simulated 0 (when the scenario's clock starts) "
        s +=
            "to the end of the checks. One lane per process. Hover over anything for its words; click a mark to follow "
        s += "its edit; Ctrl or Shift + wheel zooms, dragging pans. How to read it: docs/REPORT.md.</p>\n"
        for rule in model.rules { s += "<p class=\"rules\">\(Markup.text(rule))</p>\n" }
        if !failed.isEmpty {
            let expected = expectation?.met == true ? " (as the topology expects)" : ""
            s += "<div class=\"focus-list\"><b>Failed checks\(expected), "
                + "their first counter-example ringed in red (a device a check names: its lane):</b><ul>\n"
            for result in failed {
                let names = self.focus(of: result)
                s += "<li class=\"failed-check\" data-check=\"\(Markup.attribute(result.name))\">"
                    + "<b>\(Markup.text(result.name))</b>: \(Markup.text(result.detail))"
                if let t = firstMoment(of: names, in: model) {
                    s += " — <a href=\"#timeline\" data-focus-t=\"\(svgNum(t))\">show at \(formatSim(t))</a>"
                }
                s += "</li>\n"
            }
            s += "</ul></div>\n"
        }
        s += "<div class=\"tl-tools\"><button id=\"tl-in\">zoom in</button><button id=\"tl-out\">zoom out</button>"
        s += "<button id=\"tl-reset\">whole run</button> <span id=\"timeline-picked\"></span></div>\n"
        s += "<div class=\"timeline-box\">\n" + timeline.svg + "</div>\n" + timeline.legend
        return s
    }

    /// The plots section of report.html.
    var plotsHTML: String {
        let devices = Set(data.devices.map(\.id))
        let plotData = PlotData(
            events: data.events, devices: devices, lineages: figures.lineages,
            budgetSec: data.topology.device.freshnessBudgetSec,
            scenarioEnd: data.scenarioEndSim)
        return "<h2>Plots</h2>\n" + Plots(data: plotData).html + halvesPlotsHTML
    }

    /// An op's last error, or why there is none.
    static func reason(of op: LedgerSnapshot.OpRow) -> String {
        let error = op.lastError ?? ""
        return error.isEmpty ? "(no reason recorded)" : error
    }

    /// Ops that need attention with their reasons, and the hints that died grouped by fate and reason.
    var attentionBlocks: [Block] {
        var b: [Block] = []
        let attention = data.devices.flatMap { device in
            device.ops.filter { $0.status == .needsAttention }.map { (device.id, $0) }
        }
        if !attention.isEmpty {
            var table = Table(["device", "op", "attempts", "reason"])
            for (device, op) in attention.prefix(100) {
                table.add([Table.Cell(device), Table.Cell(op.key), Self.cell(op.attempts),
                           Table.Cell(Self.reason(of: op))])
            }
            if attention.count > 100 { table.add(["…", Table.Cell("\(attention.count - 100) more"), "", ""]) }
            b += [.heading("Ops that need attention", level: 2), .table(table)]
        }
        let reasons = hintDeathReasons
        if !reasons.isEmpty {
            var table = Table(["fate", "reason", "hints"])
            for row in reasons { table.add([Table.Cell(row.fate), Table.Cell(row.reason), Self.cell(row.count)]) }
            let ignored = data.events.filter { $0.type == EventCatalogue.hintIgnored }
            let byReason = Dictionary(grouping: ignored, by: { $0.string("reason") ?? "?" })
            for reason in byReason.keys.sorted() {
                table.add(["received, ignored", Table.Cell(reason), Self.cell(byReason[reason]!.count)])
            }
            b += [.heading("Hints that died, by reason", level: 2), .table(table)]
        }
        return b
    }

    /// Hints dropped, coalesced, throttled, discarded or expired, counted per fate and reason.
    var hintDeathReasons: [(fate: String, reason: String, count: Int)] {
        var counts: [String: [String: Int]] = [:]
        for event in data.events
        where event.proc == "broker" && HintAccounting.fates.contains(event.type)
            && event.type != EventCatalogue.hintDelivered
        {
            counts[String(event.type.dropFirst(5)), default: [:]][event.string("reason") ?? "—", default: 0] += 1
        }
        var rows = counts.keys.sorted().flatMap { fate in
            counts[fate]!.keys.sorted().map { (fate, $0, counts[fate]![$0]!) }
        }
        if figures.hints.lostInCrash > 0 {
            rows.append(("lost", "held by the broker when it was killed", figures.hints.lostInCrash))
        }
        return rows
    }
}
