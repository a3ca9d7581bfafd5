import Foundation
import Markup

/// A lesson's halves on the page: its devices grouped by their own switch settings (or, when every device has the
/// topology's settings and a server or broker switch splits them, by account), each group's plots drawn apart so the
/// broken half cannot hide in the pooled ones.
extension Report {
    /// Each group's label (its own settings, or its account) and its devices, in topology order; empty when the run
    /// has one group, or too many to draw.
    var halves: [(label: String, devices: [String])] {
        var groups: [(label: String, devices: [String])] = []
        func add(_ label: String, _ device: String) {
            if let index = groups.firstIndex(where: { $0.label == label }) {
                groups[index].devices.append(device)
            } else {
                groups.append((label, [device]))
            }
        }
        let overrides = Dictionary(deviceSettingsOverrides.map { ($0.device, $0.settings) },
                                   uniquingKeysWith: { a, _ in a })
        for device in data.devices {
            let own = overrides[device.id] ?? []
            add(own.isEmpty ? "the topology's settings" : own.map { "\($0.key) = \($0.value)" }
                .joined(separator: ", "), device.id)
        }
        if groups.count < 2 {
            groups = []
            for device in data.devices { add("account \(device.account)", device.id) }
        }
        return (2...6).contains(groups.count) ? groups : []
    }

    /// The plots of each half (report.html), under the pooled ones.
    var halvesPlotsHTML: String {
        let groups = halves
        guard !groups.isEmpty else { return "" }
        var s = "<h3>Plots by half</h3>\n<p class=\"rules\">The devices grouped by their own settings (a lesson's "
            + "halves differ in one switch), each group's passes and data age drawn apart.</p>\n"
        for group in groups {
            let plotData = PlotData(
                events: data.events, devices: Set(group.devices), lineages: [],
                budgetSec: data.topology.device.freshnessBudgetSec, scenarioEnd: data.scenarioEndSim)
            s += "<h4 class=\"half\" data-half=\"\(Markup.attribute(group.label))\">\(Markup.text(group.label)): "
                + "\(Markup.text(group.devices.joined(separator: ", ")))</h4>\n" + Plots(data: plotData).halfHTML
        }
        return s
    }
}
