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
            ("cost", RunCost(data, wallSeconds: f.wallSeconds, delivered: f.propagation.count,
                             reportPeakMB: peakMB).json),
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
}
