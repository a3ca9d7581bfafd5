import Foundation
import LabKit
import Markup
import SyncProtocol

/// report.md and report.html are one `Document`: each section gives its headings, paragraphs and typed tables once,
/// and `Document` writes them as markdown or as the page's body (which adds the timeline and the plots).
extension Report {
    var markdown: String { Document(blocks).markdown }

    /// The report's blocks, in report.md's order.
    var blocks: [Block] {
        let f = figures
        let verdict = interruptedIn == nil ? (passed ? "pass" : "FAIL") : verdictWord
        var b: [Block] = [.heading("\(data.topology.name): \(verdict)", level: 1)]
        if let headline { b.append(.paragraph(headline)) }
        if let phase = interruptedIn {
            b.append(.paragraph("The run was stopped during its \(phase) phase, before heal and quiesce: the "
                + "invariants below were checked on what it had done, and some cannot hold yet (edits still on their "
                + "way, replicas behind)."))
        }
        if !data.topology.description.isEmpty { b.append(.paragraph(data.topology.description)) }
        if let replay {
            b.append(.paragraph("This is a simulation: every process ran as its instance in one process on a virtual "
                + "clock (docs/SIMULATION.md); times are virtual. Replay it byte for byte: `\(replay)`"))
        }
        b.append(.paragraph("Seed \(data.seed) · time scale \(format(data.timeScale)) (one real second = "
            + "\(formatSim(data.timeScale)) simulated) · \(formatSim(data.topology.duration)) simulated scenario · "
            + "\(formatReal(f.wallSeconds)) wall · \(data.devices.count) devices in "
            + "\(data.topology.accounts.count) account(s)"))
        b += [.heading("Invariants", level: 2), .table(Self.resultTable("invariant", invariants))]
        if !checks.isEmpty { b += [.heading("Product checks", level: 2), .table(Self.resultTable("check", checks))] }
        b += expectationBlocks + deviceSettingsBlocks + switchEventsBlocks
        if !notes.isEmpty {
            b += [.heading("Notes", level: 2), .list(notes.map { $0.replacingOccurrences(of: "|", with: "\\|") })]
        }
        if let hosts = HostsReport(data) { b += hosts.blocks }
        b += figureBlocks + attentionBlocks + (nemesis?.blocks ?? []) + (crashes?.blocks ?? []) + passesBlocks
        b += [.heading("Propagation (saved on one device → applied on another)", level: 2),
              .table(Table(["path", "count", "p50", "p95", "p99", "max", "p50 simulated", "max simulated"],
                           rows: [Self.latencyRow("all", f.propagation)]
                            + f.propagationByPath.keys.sorted().map { Self.latencyRow($0, f.propagationByPath[$0]!) })),
              .paragraph("The path is the trigger of the pass that applied the edit on the receiving device.")]
        b += platformBlocks + ReferenceFigures.blocks(references)
        b += [.heading("Seed 001's metrics", level: 2),
              .table(Table(["metric", "value"],
                           rows: f.metrics.map { Table.Row([Table.Cell($0.0), Table.Cell($0.1)]) }))]
        b += RunCost(data, wallSeconds: f.wallSeconds, delivered: f.propagation.count, reportPeakMB: peakMB).blocks
        b += lineageBlocks
        b += [.heading("Files", level: 2),
              .paragraph("`events.jsonl` (every event, merged), `logs/`, `server.sqlite`, `devices/*.sqlite`, "
                + "`report.json`.")]
        return b
    }

    /// The invariants' or the product checks' table.
    static func resultTable(_ word: String, _ results: [InvariantResult]) -> Table {
        Table([word, "held", "detail"], rows: results.map { r in
            Table.Row([Table.Cell(r.name), r.held ? "yes" : .strong("NO"), Table.Cell(r.detail)])
        })
    }

    /// The hints' and the ops' one-row tables.
    private var figureBlocks: [Block] {
        let (f, h) = (figures, figures.hints)
        func row(_ numbers: [Int]) -> [Table.Row] { [Table.Row(numbers.map { Table.Cell(String($0)) })] }
        return [
            .heading("Hints (push is a hint)", level: 2), .paragraph("Every hint the broker accepted, and its fate."),
            .table(Table(["accepted", "delivered", "dropped", "coalesced", "throttled", "discarded", "expired", "held",
                          "lost with a killed broker", "duplicated (beside)"],
                         rows: row([h.accepted, h.delivered, h.dropped, h.coalesced, h.throttled, h.discarded,
                                    h.expired, h.held, h.lostInCrash, h.duplicated]))),
            .heading("Ops (durable state is the recovery mechanism)", level: 2),
            .table(Table(["saved", "applied", "resends", "unknown outcomes", "need attention", "conflicts"],
                         rows: row([f.opsSaved, f.opsApplied, f.resends, f.unknownOutcomes, f.needsAttention,
                                    f.conflicts]))),
        ]
    }

    private var passesBlocks: [Block] {
        let f = figures
        let triggers = Array(Set(f.passesByDevice.values.flatMap(\.keys))).sorted()
        var table = Table(["device", "platform"] + triggers + ["total", "did nothing"])
        // A row per device up to a screenful; beyond, the first and last few and the rest summed (report.json has
        // every device).
        let half = Self.devicesListed / 2
        let long = data.devices.count > Self.devicesListed
        let listed = long ? data.devices.prefix(half) + data.devices.suffix(half) : data.devices[...]
        for (index, device) in listed.enumerated() {
            if index == half && long {
                let middle = data.devices.dropFirst(half).dropLast(half)
                let sums = triggers.map { trigger in
                    middle.reduce(0) { $0 + (f.passesByDevice[$1.id]?[trigger] ?? 0) }
                }
                let idle = middle.reduce(0) { $0 + (f.idlePassesByDevice[$1.id] ?? 0) }
                table.add(["… \(middle.count) more devices", ""] + (sums + [sums.reduce(0, +), idle]).map(Self.cell))
            }
            let row = f.passesByDevice[device.id] ?? [:]
            table.add([Table.Cell(device.id), Table.Cell(device.platform.rawValue)]
                + (triggers.map { row[$0] ?? 0 } + [row.values.reduce(0, +), f.idlePassesByDevice[device.id] ?? 0])
                .map(Self.cell))
        }
        let heal = f.healPassesByTrigger.keys.sorted().map { "\($0) \(f.healPassesByTrigger[$0]!)" }
        return Block.section("Passes by trigger", "Passes during the scenario. Heal and quiesce ran "
            + "\(f.healPassesTotal) more (" + heal.joined(separator: ", ") + "), counted apart. *Did nothing*: passes "
            + "that sent no op and applied no change (the work a design without unique work repeats; the product check "
            + "`wasted-passes`).", table)
    }

    private var platformBlocks: [Block] {
        var table = Table(["platform", "devices", "syncs", "per install (min–max)", "expected", "spec met?",
                           "median gap", "all passes", "per open", "night", "unsynced at 24 h", "guarantee reported"])
        for row in figures.platforms {
            table.add([
                Table.Cell(row.platform), Self.cell(row.devices), Self.cell(row.syncs),
                Table.Cell(String(format: "%.1f", row.syncsPerInstallMean)
                    + " (\(row.syncsPerInstall.min() ?? 0)–\(row.syncsPerInstall.max() ?? 0))"),
                Table.Cell(ReferenceFigures.format(row.expectedPerInstall)), row.specMet ? "yes" : "no",
                Table.Cell(row.medianGapMinutes.map { formatSim($0 * 60) } ?? "—"), Self.cell(row.allPasses),
                Table.Cell(row.passesPerOpen.map { String(format: "%.2f", $0) } ?? "—"),
                Table.Cell(row.nightSharePercent.map { String(format: "%.0f %%", $0) } ?? "—"),
                Table.Cell(String(format: "%.1f %%", row.unsyncedAt24hPercent)), Table.Cell(row.guarantee),
            ])
        }
        return [
            .heading("Platforms (seed 000's table)", level: 2),
            .paragraph("Syncs are the passes each platform's scheduler granted during the scenario (periodic work, "
                + "iOS refresh windows, the web interval timer), with the median gap between them; all passes adds "
                + "those that events triggered (push hints, app opens, edits, connectivity). An edit is unsynced at "
                + "24 h if the server had not applied it 24 simulated hours after it was saved (or by the end of the "
                + "scenario, if sooner)."),
            .paragraph("Per install, as seed 000 counts (672 expected is one install's seven days of 15 minutes): the "
                + "mean and range of each install's syncs, the expected count (the scenario over the desired "
                + "interval) and whether the spec is met (median gap within 1.5 × the desired interval and at least "
                + "80 % of the expected count); night is the share of background runs that started 02:00–05:00 "
                + "(simulated time 0 is midnight)."),
            .table(table),
            .paragraph("report.json's `platforms` has each platform's hour-of-day histogram of background runs and "
                + "each install's first and last guarantee."),
        ]
    }

    private var lineageBlocks: [Block] {
        let lineages = figures.lineages
        let shown = lineages.prefix(200)
        var items: [String] = shown.map { l in
            var line = "`\(l.key)` \(l.draft) saved on \(l.device) at \(formatSim(l.savedSim))"
            line += l.seq.map { " → seq \($0)" } ?? " → not applied"
            if !l.hints.isEmpty {
                let fates = Dictionary(grouping: l.hints, by: \.fate).map { "\($0.value.count) \($0.key)" }.sorted()
                line += " → hints: " + fates.joined(separator: ", ")
            }
            if !l.arrivals.isEmpty {
                line += " → " + l.arrivals.map {
                    "\($0.device) by \($0.trigger) in " + String(format: "%.1f ms", $0.realMs)
                        + " (\(formatSim($0.simSec)))"
                }.joined(separator: "; ")
            }
            return line
        }
        if lineages.count > shown.count {
            items.append("… and \(lineages.count - shown.count) more edits (all in events.jsonl)")
        }
        // A long run's lineage list is folded on the page: the timeline shows it, the list is there to search.
        return [
            .heading("Lineage of each edit", level: 2),
            .paragraph("op → change seq → hints and their fate → the pass that applied it on each other device."),
            .list(items, folded: lineages.count > 20 ? "\(lineages.count) edits (unfold)" : nil),
        ]
    }

    /// Both halves of a lesson: what the topology expected to fail (and the first counter-example of each), and
    /// what it expected to hold.
    private var expectationBlocks: [Block] {
        guard let expectation else { return [] }
        var table = Table(["subject", "check", "expected", "seen", "first counter-example"])
        for item in expectation.items {
            table.add([Table.Cell(item.subject), Table.Cell(item.check), "fails",
                       item.seen ? "fails" : .strong("holds"), Table.Cell(item.example ?? "—")])
        }
        for (check, violation) in expectation.unexpected.prefix(20) {
            table.add([Table.Cell(violation.device ?? violation.account ?? "—"), Table.Cell(check), "holds",
                       .strong("fails"), Table.Cell(violation.text)])
        }
        var b = Block.section("Expectation: " + (expectation.met ? "met" : "**NOT met**"),
                              "The topology predicts which checks fail, and where; everything else must hold.", table)
        let expectedSubjects = Set(expectation.items.map(\.subject))
        let holding = data.devices.filter { device in
            !expectedSubjects.contains(device.id) && !expectedSubjects.contains(device.account)
        }.map(\.id)
        if !holding.isEmpty {
            b.append(.paragraph("Every check held, as expected, for: " + holding.prefix(20).joined(separator: ", ")
                + (holding.count > 20 ? " and \(holding.count - 20) more" : "") + "."))
        }
        return b
    }

    /// Devices whose settings differ from the topology-wide `device` block, and how.
    var deviceSettingsOverrides: [(device: String, settings: [(key: String, value: String)])] {
        data.topology.devices.compactMap { spec in
            let own = spec.settings.differences(from: data.topology.device)
            return own.isEmpty ? nil : (spec.id, own)
        }
    }

    private var deviceSettingsBlocks: [Block] {
        let overrides = deviceSettingsOverrides
        guard !overrides.isEmpty else { return [] }
        var table = Table(["device", "own settings"])
        for row in overrides.prefix(Self.devicesListed) {
            table.add([Table.Cell(row.device),
                       Table.Cell(row.settings.map { "\($0.key) = \($0.value)" }.joined(separator: ", "))])
        }
        if overrides.count > Self.devicesListed { table.add(["… \(overrides.count - Self.devicesListed) more", ""]) }
        return Block.section("Device settings", "Devices whose settings differ from the topology-wide `device` block.",
                             table)
    }

    private static func latencyRow(_ name: String, _ l: Latency) -> Table.Row {
        Table.Row([Table.Cell(name), cell(l.count)]
            + [l.p50Ms, l.p95Ms, l.p99Ms, l.maxMs].map { Table.Cell(String(format: "%.2f ms", $0)) }
            + [Table.Cell(formatSim(l.p50SimSec)), Table.Cell(formatSim(l.maxSimSec))])
    }

    /// A count's cell.
    static func cell(_ n: Int) -> Table.Cell { Table.Cell(String(n)) }
}
