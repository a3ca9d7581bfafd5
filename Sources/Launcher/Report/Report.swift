import Foundation
import LabKit
import Markup
import SyncProtocol

/// The verdict and figures of a run, written as `report.json` (the contract of DESIGN.md), `report.md`,
/// `report.html` and a terminal summary.
public struct Report {
    /// Devices listed one by one in report.md's passes table; more are summarized in one row.
    static let devicesListed = 40

    package let data: RunData
    package let invariants: [InvariantResult]
    /// The topology's product checks (`checks`), empty when it states none.
    package let checks: [InvariantResult]
    /// How the run measured up to the topology's `expect`, nil when it has none.
    let expectation: Expectation.Outcome?
    package let figures: RunFigures
    let notes: [String]
    /// The phase the launcher was in when the run was stopped before its checks (Ctrl-C), or nil for a whole run
    /// (and for a folder no launcher wrote). Read once from the events: a big run has millions of them.
    public let interruptedIn: String?
    /// What the nemesis did (nil for a run without one).
    var nemesis: NemesisFigures?
    /// Where each self-kill at a crash point landed.
    var crashes: CrashDeaths?
    /// For a run of `synclab sim` (run.json `simulated`), the command that replays it byte for byte; nil for a run of
    /// real processes.
    var replay: String? = nil
    /// The topology's reference figures beside the run's (empty without `reference`).
    var references: [ReferenceFigures.Row] = []
    /// The peak resident MB of this process once the run was read and checked (the cost section's launcher figure);
    /// nil for a simulated run.
    var peakMB: Double?

    static func interruptedIn(_ data: RunData) -> String? {
        let launcher = data.events.filter { $0.proc == "launcher" }
        guard launcher.contains(where: { $0.type == EventCatalogue.processStarted }) else { return nil }
        let phases = launcher.filter { $0.type == EventCatalogue.phase }.compactMap { $0.string("name") }
        return phases.contains("check") ? nil : (phases.last ?? "start-up")
    }

    /// A run passes when it ran to its checks and every invariant and product check held — or, for a topology that
    /// expects failures, when exactly the expected checks failed where it said.
    public var passed: Bool {
        guard interruptedIn == nil else { return false }
        if let expectation { return expectation.met }
        return invariants.allSatisfy(\.held) && checks.allSatisfy(\.held)
    }

    /// `PASS`, `FAIL`, or `INTERRUPTED (in PHASE)`.
    var verdictWord: String {
        if let phase = interruptedIn { return "INTERRUPTED (in \(phase))" }
        return passed ? "PASS" : "FAIL"
    }

    /// Reads the run folder and computes the checks and figures.
    public static func make(folder: RunFolder, ignoreExpect: Bool = false) throws -> Report {
        let data = try RunData.load(folder: folder, ignoreExpect: ignoreExpect)
        let notes = (data.stats["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        let invariants = InvariantChecks.all(data)
        let figures = RunFigures(data)
        let references = ReferenceFigures.rows(data, figures)
        let checks = ProductChecks.all(data) + [ReferenceFigures.check(references)].compactMap { $0 }
        var report = Report(data: data, invariants: invariants, checks: checks,
                            expectation: data.topology.expect?.evaluate(invariants + checks), figures: figures,
                            notes: notes, interruptedIn: interruptedIn(data))
        report.references = references
        report.nemesis = NemesisFigures(data)
        report.crashes = CrashDeaths(data)
        if let text = try? String(contentsOfFile: folder.path("run.json"), encoding: .utf8),
           let run = try? JSONValue.parse(text), run["simulated"]?.boolValue == true
        {
            report.replay = run["replay"]?.stringValue ?? ""
        }
        // Not for a simulated run: its report is the same bytes for the same seed, and a process's peak is not.
        if report.replay == nil { report.peakMB = OwnMemory.mb("VmHWM") }
        return report
    }

    public func write() {
        data.folder.write("report.json", json.description + "\n")
        data.folder.write("report.md", markdown)
        data.folder.write("report.html", html)
    }

    // MARK: - report.json

    var json: JSONValue {
        let f = figures
        let h = f.hints
        var byPath: [(String, JSONValue)] = []
        for path in f.propagationByPath.keys.sorted() { byPath.append((path, f.propagationByPath[path]!.json)) }
        var propagation = f.propagation.json.objectValue ?? []
        propagation.append(("byPath", .object(byPath)))
        return .object([
            ("verdict", .string(passed ? "pass" : "fail")),
            ("interruptedIn", interruptedIn.map { .string($0) } ?? .null),
            ("topology", .string(data.topology.name)),
            ("seed", .int(Int(data.seed))),
            ("simulated", .bool(replay != nil)),
            ("replay", replay.map { .string($0) } ?? .null),
            ("timeScale", .double(data.timeScale)),
            ("durationSimSec", .double(data.topology.duration)),
            ("wallSeconds", .double(round3(f.wallSeconds))),
            ("invariants", .array(invariants.map(Self.json))),
            ("checks", .array(checks.map(Self.json))),
            ("expectation", expectationJSON),
            ("hints", .object([
                ("accepted", .int(h.accepted)), ("delivered", .int(h.delivered)), ("dropped", .int(h.dropped)),
                ("duplicated", .int(h.duplicated)), ("coalesced", .int(h.coalesced)), ("throttled", .int(h.throttled)),
                ("discarded", .int(h.discarded)), ("expired", .int(h.expired)), ("held", .int(h.held)),
                ("lostWithKilledBroker", .int(h.lostInCrash)),
            ])),
            ("ops", .object([
                ("saved", .int(f.opsSaved)), ("applied", .int(f.opsApplied)), ("resends", .int(f.resends)),
                ("unknownOutcomes", .int(f.unknownOutcomes)), ("needsAttention", .int(f.needsAttention)),
                ("conflicts", .int(f.conflicts)),
            ])),
            ("passes", .object([
                ("total", .int(f.passesTotal)),
                ("byTrigger", .object(f.passesByTrigger.keys.sorted().map { ($0, .int(f.passesByTrigger[$0]!)) })),
                ("heal", .object([
                    ("total", .int(f.healPassesTotal)),
                    ("byTrigger", .object(f.healPassesByTrigger.keys.sorted().map { ($0,
                        .int(f.healPassesByTrigger[$0]!)) })),
                ])),
                ("byDevice", .object(f.passesByDevice.keys.sorted().map { device in
                    (device, .object(f.passesByDevice[device]!.keys.sorted().map { ($0,
                        .int(f.passesByDevice[device]![$0]!)) }))
                })),
                ("idleByDevice", .object(f.idlePassesByDevice.keys.sorted().map { ($0,
                    .int(f.idlePassesByDevice[$0]!)) })),
            ])),
            ("propagation", .object(propagation)),
            ("platforms", .array(f.platforms.map { row in
                .object([
                    ("platform", .string(row.platform)), ("devices", .int(row.devices)), ("syncs", .int(row.syncs)),
                    ("allPasses", .int(row.allPasses)),
                    ("medianGapMinutes", row.medianGapMinutes.map { .double(round3($0)) } ?? .null),
                    ("unsyncedAt24hPercent", .double(row.unsyncedAt24hPercent)), ("guarantee", .string(row.guarantee)),
                ] + Self.perInstallJSON(row))
            })),
            ("reference", ReferenceFigures.json(references)),
            ("metrics", .object(f.metrics.map { ($0.0, .string($0.1)) })),
            ("deviceSettings", .object(deviceSettingsOverrides.map { row in
                (row.device, .object(row.settings.map { ($0.key, .string($0.value)) }))
            })),
            ("switchEvents", switchEventsJSON),
            ("residentMB", data.stats["residentMB"] ?? .null),
            ("notes", .array(notes.map { .string($0) })),
            ("cost", RunCost(data, wallSeconds: f.wallSeconds, reportPeakMB: peakMB).json),
        ] + faultFields)
    }

    /// report.json's per-install figures of a platform row.
    static func perInstallJSON(_ row: PlatformRow) -> [(String, JSONValue)] {
        [("syncsPerInstall", .object([("mean", .double(round3(row.syncsPerInstallMean))),
                                      ("min", .int(row.syncsPerInstall.min() ?? 0)),
                                      ("max", .int(row.syncsPerInstall.max() ?? 0)),
                                      ("each", .array(row.syncsPerInstall.map { .int($0) }))])),
         ("expectedPerInstall", .double(row.expectedPerInstall)), ("specMet", .bool(row.specMet)),
         ("opens", .int(row.opens)), ("passesPerOpen", row.passesPerOpen.map { .double($0) } ?? .null),
         ("backgroundByHour", .array(row.backgroundByHour.map { .int($0) })),
         ("nightSharePercent", row.nightSharePercent.map { .double($0) } ?? .null),
         ("freshGuaranteeObservedPercent", row.freshGuaranteeObservedPercent.map { .double($0) } ?? .null),
         ("reportedMedianGapMinutes", row.reportedMedianGapMinutes.map { .double($0) } ?? .null),
         ("guaranteeByDevice", .object(row.guaranteeByDevice.map {
             ($0.device, .object([("first", .string($0.first)), ("last", .string($0.last))]))
         }))]
    }

    /// report.json's `nemesis` (null without one) and `crashes` (each self-kill at a crash point).
    var faultFields: [(String, JSONValue)] {
        [("nemesis", nemesis?.json ?? .null), ("crashes", crashes?.json ?? .array([])),
         ("crashCoverage", crashes?.coverageJSON ?? .array([]))]
    }

    var expectationJSON: JSONValue {
        guard let outcome = expectation else { return .null }
        let expected: [JSONValue] = outcome.items.map { item in
            let example: JSONValue = item.example.map { .string($0) } ?? .null
            return .object([("subject", .string(item.subject)), ("check", .string(item.check)),
                ("seen", .bool(item.seen)),
                            ("example", example)])
        }
        return .object([("met", .bool(outcome.met)), ("expected", .array(expected)),
                        ("problems", .array(outcome.problems.map { .string($0) }))])
    }

    static func json(_ result: InvariantResult) -> JSONValue {
        .object([("name", .string(result.name)), ("held", .bool(result.held)), ("detail", .string(result.detail)),
                 ("violations", .array(result.violations.prefix(50).map { v in
                     .object([("device", v.device.map { .string($0) } ?? .null),
                              ("account", v.account.map { .string($0) } ?? .null), ("text", .string(v.text))])
                 })),
                 ("violationCount", .int(result.violations.count))])
    }

    // MARK: - Terminal

    public var summary: String {
        let f = figures
        var out = "\n\(data.topology.name): \(verdictWord) — seed \(data.seed), time scale \(format(data.timeScale))"
        out += ", \(formatSim(data.topology.duration)) simulated in \(formatReal(f.wallSeconds))"
        out += replay == nil ? "\n" : " of virtual time\n  simulation (one process, virtual clock); replay: "
            + "\(replay!)\n"
        for result in invariants + checks {
            out += "  \(result.held ? "✓" : "✗") \(result.name.padding(toLength: 21, withPad: " ", startingAt: 0)) "
                + "\(result.detail)\n"
        }
        if let expectation {
            out += expectation.met
                ? "  expectation met: exactly the expected checks failed, where the topology said\n"
                : "  expectation NOT met:\n"
            for item in expectation.items where item.seen {
                out += "    ✓ \(item.check) failed for \(item.subject), as expected\n"
            }
            for problem in expectation.problems.prefix(10) { out += "    ✗ \(problem)\n" }
        }
        let h = f.hints
        out += "  ops: \(f.opsSaved) saved, \(f.opsApplied) applied, \(f.resends) resends, \(f.unknownOutcomes) "
            + "unknown outcomes, \(f.needsAttention) need attention\n"
        out += "  hints: \(h.accepted) accepted, \(h.delivered) delivered, \(h.dropped) dropped, \(h.duplicated) "
            + "duplicated, \(h.coalesced) coalesced, \(h.throttled) throttled, \(h.discarded) discarded, \(h.expired) "
            + "expired, \(h.held) held\n"
        let deaths = hintDeathReasons
        if !deaths.isEmpty {
            out += "  hints that died: "
                + deaths.map { "\($0.count) \($0.fate) (\($0.reason))" }.joined(separator: ", ") + "\n"
        }
        out += "  passes: \(f.passesTotal) in the scenario ("
            + f.passesByTrigger.keys.sorted().map { "\($0) \(f.passesByTrigger[$0]!)" }.joined(separator: ", ")
            + "), \(f.healPassesTotal) in heal and quiesce\n"
        if f.propagation.count > 0 {
            out += String(format: "  propagation: %d arrivals, p50 %.2f ms, p99 %.2f ms, max %.2f ms real (p50 %@ "
                + "simulated)\n",
                          f.propagation.count, f.propagation.p50Ms, f.propagation.p99Ms, f.propagation.maxMs,
                          formatSim(f.propagation.p50SimSec))
        }
        if let nemesis { out += "  \(nemesis.summary)\n" }
        for note in notes { out += "  note: \(note)\n" }
        if let hosts = HostsReport(data) { out += hosts.summary }
        out += "  report: \(data.folder.path("report.md"))\n"
        return out
    }

    // MARK: - report.md

    var markdown: String {
        let f = figures
        var md = "# \(data.topology.name): \(interruptedIn == nil ? (passed ? "pass" : "FAIL") : verdictWord)\n\n"
        md += headline
        if let phase = interruptedIn {
            md += "The run was stopped during its \(phase) phase, before heal and quiesce: the invariants below were "
                + "checked on what it had done, and some cannot hold yet (edits still on their way, replicas "
                    + "behind).\n\n"
        }
        if !data.topology.description.isEmpty { md += "\(data.topology.description)\n\n" }
        if let replay {
            md += "This is a simulation: every process ran as its instance in one process on a virtual clock "
                + "(docs/SIMULATION.md); times are virtual. Replay it byte for byte: `\(replay)`\n\n"
        }
        md += "Seed \(data.seed) · time scale \(format(data.timeScale)) (one real second = "
            + "\(formatSim(data.timeScale)) simulated) · "
        md += "\(formatSim(data.topology.duration)) simulated scenario · \(formatReal(f.wallSeconds)) wall · "
        md += "\(data.devices.count) devices in \(data.topology.accounts.count) account(s)\n\n"
        md += "## Invariants\n\n| invariant | held | detail |\n| --- | --- | --- |\n"
        for r in invariants { md += "| \(r.name) | \(r.held ? "yes" : "**NO**") | \(escape(r.detail)) |\n" }
        if !checks.isEmpty {
            md += "\n## Product checks\n\n| check | held | detail |\n| --- | --- | --- |\n"
            for r in checks { md += "| \(r.name) | \(r.held ? "yes" : "**NO**") | \(escape(r.detail)) |\n" }
        }
        md += expectationMarkdown
        md += deviceSettingsMarkdown
        md += switchEventsMarkdown
        if !notes.isEmpty {
            md += "\n## Notes\n\n" + notes.map { "- \(escape($0))" }.joined(separator: "\n") + "\n"
        }
        if let hosts = HostsReport(data) { md += hosts.markdown }
        let h = f.hints
        md += "\n## Hints (push is a hint)\n\nEvery hint the broker accepted, and its fate.\n\n"
        md += "| accepted | delivered | dropped | coalesced | throttled | discarded | expired | held | lost with a "
            + "killed broker | duplicated (beside) |\n"
        md += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
        md += "| \(h.accepted) | \(h.delivered) | \(h.dropped) | \(h.coalesced) | \(h.throttled) | \(h.discarded) | "
            + "\(h.expired) | \(h.held) | \(h.lostInCrash) | \(h.duplicated) |\n"
        md += "\n## Ops (durable state is the recovery mechanism)\n\n"
        md += "| saved | applied | resends | unknown outcomes | need attention | conflicts |\n| --- | --- | --- | --- "
            + "| --- | --- |\n"
        md += "| \(f.opsSaved) | \(f.opsApplied) | \(f.resends) | \(f.unknownOutcomes) | \(f.needsAttention) | "
            + "\(f.conflicts) |\n"
        md += attentionMarkdown
        if let nemesis { md += nemesis.markdown }
        if let crashes { md += crashes.markdown }
        let triggers = Array(Set(f.passesByDevice.values.flatMap(\.keys))).sorted()
        md += "\n## Passes by trigger\n\nPasses during the scenario. Heal and quiesce ran \(f.healPassesTotal) more ("
            + f.healPassesByTrigger.keys.sorted().map { "\($0) \(f.healPassesByTrigger[$0]!)" }.joined(separator: ", ")
            + "), counted apart. *Did nothing*: passes that sent no op and applied no change (the work a design "
            + "without unique work repeats; the product check `wasted-passes`).\n\n| device | platform | "
            + triggers.joined(separator: " | ") + " | total | did nothing |\n"
        md += "| --- | --- |" + String(repeating: " --- |", count: triggers.count + 2) + "\n"
        // A row per device up to a screenful; beyond, the first and last few and the rest summed (report.json has
        // every device).
        let listed = data.devices.count <= Self.devicesListed ? data.devices[...]
            : data.devices.prefix(Self.devicesListed / 2) + data.devices.suffix(Self.devicesListed / 2)
        for (index, device) in listed.enumerated() {
            if index == Self.devicesListed / 2 && data.devices.count > Self.devicesListed {
                let middle = data.devices.dropFirst(Self.devicesListed / 2).dropLast(Self.devicesListed / 2)
                let sums = triggers.map { trigger in middle.reduce(0) { $0
                    + (f.passesByDevice[$1.id]?[trigger] ?? 0) } }
                let idle = middle.reduce(0) { $0 + (f.idlePassesByDevice[$1.id] ?? 0) }
                md += "| … \(middle.count) more devices | | " + sums.map(String.init).joined(separator: " | ")
                    + " | \(sums.reduce(0, +)) | \(idle) |\n"
            }
            let row = f.passesByDevice[device.id] ?? [:]
            md += "| \(device.id) | \(device.platform.rawValue) | "
                + triggers.map { "\(row[$0] ?? 0)" }.joined(separator: " | ")
                + " | \(row.values.reduce(0, +)) | \(f.idlePassesByDevice[device.id] ?? 0) |\n"
        }
        md += "\n## Propagation (saved on one device → applied on another)\n\n"
        md += "| path | count | p50 | p95 | p99 | max | p50 simulated | max simulated |\n| --- | --- | --- | --- | "
            + "--- | --- | --- | --- |\n"
        md += latencyRow("all", f.propagation)
        for path in f.propagationByPath.keys.sorted() { md += latencyRow(path, f.propagationByPath[path]!) }
        md += "\nThe path is the trigger of the pass that applied the edit on the receiving device.\n"
        md += "\n## Platforms (seed 000's table)\n\nSyncs are the passes each platform's scheduler granted during the "
        md += "scenario (periodic work, iOS refresh windows, the web interval timer), with the median gap between "
            + "them; "
        md += "all passes adds those that events triggered (push hints, app opens, edits, connectivity). An edit is "
            + "unsynced "
        md += "at 24 h if the server had not applied it 24 simulated hours after it was saved (or by the end of the "
            + "scenario, if sooner).\n\n"
        md += "Per install, as seed 000 counts (672 expected is one install's seven days of 15 minutes): the mean "
        md += "and range of each install's syncs, the expected count (the scenario over the desired interval) and "
        md += "whether the spec is met (median gap within 1.5 × the desired interval and at least 80 % of the expected "
        md += "count); night is the share of background runs that started 02:00–05:00 (simulated time 0 is "
            + "midnight).\n\n"
        md += "| platform | devices | syncs | per install (min–max) | expected | spec met? | median gap | all passes | "
        md += "per open | night | unsynced at 24 h | guarantee reported |\n"
        md += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
        for row in f.platforms {
            md += "| \(row.platform) | \(row.devices) | \(row.syncs) | "
                + String(format: "%.1f", row.syncsPerInstallMean)
            md += " (\(row.syncsPerInstall.min() ?? 0)–\(row.syncsPerInstall.max() ?? 0)) | "
            md += ReferenceFigures.format(row.expectedPerInstall) + " | \(row.specMet ? "yes" : "no") | "
            md += "\(row.medianGapMinutes.map { formatSim($0 * 60) } ?? "—") | \(row.allPasses) | "
            md += (row.passesPerOpen.map { String(format: "%.2f", $0) } ?? "—") + " | "
            md += (row.nightSharePercent.map { String(format: "%.0f %%", $0) } ?? "—") + " | "
            md += String(format: "%.1f %%", row.unsyncedAt24hPercent) + " | \(row.guarantee) |\n"
        }
        md += "\nreport.json's `platforms` has each platform's hour-of-day histogram of background runs and each "
        md += "install's first and last guarantee.\n"
        md += ReferenceFigures.markdown(references)
        md += "\n## Seed 001's metrics\n\n| metric | value |\n| --- | --- |\n"
        for (name, value) in f.metrics { md += "| \(name) | \(value) |\n" }
        md += RunCost(data, wallSeconds: f.wallSeconds, reportPeakMB: peakMB).markdown
        md += "\n## Lineage of each edit\n\nop → change seq → hints and their fate → the pass that applied it on each "
            + "other device.\n\n"
        let shown = f.lineages.prefix(200)
        for l in shown {
            md += "- `\(l.key)` \(l.draft) saved on \(l.device) at \(formatSim(l.savedSim))"
            md += l.seq.map { " → seq \($0)" } ?? " → not applied"
            if !l.hints.isEmpty {
                let fates = Dictionary(grouping: l.hints, by: \.fate).map { "\($0.value.count) \($0.key)" }.sorted()
                md += " → hints: " + fates.joined(separator: ", ")
            }
            if !l.arrivals.isEmpty {
                md += " → " + l.arrivals.map {
                    "\($0.device) by \($0.trigger) in " + String(format: "%.1f ms", $0.realMs)
                        + " (\(formatSim($0.simSec)))"
                }.joined(separator: "; ")
            }
            md += "\n"
        }
        if f.lineages.count > shown.count { md += "- … and \(f.lineages.count - shown.count) more edits (all in "
            + "events.jsonl)\n" }
        md += "\n## Files\n\n`events.jsonl` (every event, merged), `logs/`, `server.sqlite`, `devices/*.sqlite`, "
            + "`report.json`.\n"
        return md
    }

    /// Both halves of a lesson: what the topology expected to fail (and the first counter-example of each), and
    /// what it expected to hold.
    private var expectationMarkdown: String {
        guard let expectation else { return "" }
        var md = "\n## Expectation: " + (expectation.met ? "met" : "**NOT met**") + "\n\n"
        md += "The topology predicts which checks fail, and where; everything else must hold.\n\n"
        md += "| subject | check | expected | seen | first counter-example |\n| --- | --- | --- | --- | --- |\n"
        for item in expectation.items {
            md += "| \(item.subject) | \(item.check) | fails | \(item.seen ? "fails" : "**holds**") | "
                + "\(escape(item.example ?? "—")) |\n"
        }
        for (check, violation) in expectation.unexpected.prefix(20) {
            md += "| \(violation.device ?? violation.account ?? "—") | \(check) | holds | **fails** | "
                + "\(escape(violation.text)) |\n"
        }
        let expectedSubjects = Set(expectation.items.map(\.subject))
        let holding = data.devices.filter { device in
            !expectedSubjects.contains(device.id) && !expectedSubjects.contains(device.account)
        }.map(\.id)
        if !holding.isEmpty {
            md += "\nEvery check held, as expected, for: " + holding.prefix(20).joined(separator: ", ")
                + (holding.count > 20 ? " and \(holding.count - 20) more" : "") + ".\n"
        }
        return md
    }

    /// Devices whose settings differ from the topology-wide `device` block, and how.
    var deviceSettingsOverrides: [(device: String, settings: [(key: String, value: String)])] {
        data.topology.devices.compactMap { spec in
            let own = spec.settings.differences(from: data.topology.device)
            return own.isEmpty ? nil : (spec.id, own)
        }
    }

    private var deviceSettingsMarkdown: String {
        let overrides = deviceSettingsOverrides
        guard !overrides.isEmpty else { return "" }
        var md = "\n## Device settings\n\nDevices whose settings differ from the topology-wide `device` block.\n\n"
        md += "| device | own settings |\n| --- | --- |\n"
        for row in overrides.prefix(Self.devicesListed) {
            md += "| \(row.device) | " + row.settings.map { "\($0.key) = \($0.value)" }.joined(separator: ", ") + " |\n"
        }
        if overrides.count > Self.devicesListed { md += "| … \(overrides.count - Self.devicesListed) more | |\n" }
        return md
    }

    private func latencyRow(_ name: String, _ l: Latency) -> String {
        String(format: "| %@ | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %@ | %@ |\n", name, l.count, l.p50Ms,
            l.p95Ms, l.p99Ms,
               l.maxMs, formatSim(l.p50SimSec), formatSim(l.maxSimSec))
    }

    private func escape(_ s: String) -> String { s.replacingOccurrences(of: "|", with: "\\|") }
}
