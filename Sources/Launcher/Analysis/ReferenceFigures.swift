import Foundation
import Markup
import SyncProtocol

/// A published figure a topology expects a run to reproduce (top-level key `reference`): the article's value, the
/// band the lab's measurement must fall in, and where the value was published. docs/SEEDS.md lists them.
public struct ReferenceFigure: Sendable, Equatable {
    /// A report figure, e.g. `platforms.ios.syncsPerInstall` (`ReferenceFigures.knownNames`).
    public var name: String
    /// The article's value (key `seed`).
    public var published: Double
    /// A tolerance around `published`, never around the lab's own value (the reading refuses a band without it).
    public var band: ClosedRange<Double>
    /// Where it was published: it names the seed (`seed 000: …`).
    public var source: String
    /// The article's section and its own words for the figure.
    public var section: String? = nil
    public var quote: String? = nil
    /// The published value is the lab's reading of the article's words ("unsynced for days" read as 0 %), not a
    /// number it printed; the report says so.
    public var reading = false
    /// False for a figure the lab cannot reproduce (`reason` says why): printed beside the run's, never judged.
    public var reproduced = true
    public var reason: String? = nil
    /// The seed says this design fails: no band of the same figure for a design that works may contain this
    /// published value, nor this band another's (a band that cannot tell the two apart cannot fail).
    public var fails = false
}

/// The `reference-figures` check: each reference figure measured, compared with its published value, and one
/// violation per figure outside its band, so a model change that breaks a calibration fails the run.
enum ReferenceFigures {
    static let checkName = "reference-figures"

    /// Per-platform figures (`platforms.<platform>.<figure>`), each described for the report and the errors.
    static let platformFigures: [(name: String, meaning: String)] = [
        ("syncsPerInstall", "scheduler-granted syncs per install, mean"),
        ("syncsPerInstallMin", "the fewest syncs of one install"),
        ("syncsPerInstallMax", "the most syncs of one install"),
        ("syncs", "scheduler-granted syncs, every install together"),
        ("expectedPerInstall", "the scenario's length over the desired interval"),
        ("medianGapMinutes", "median gap between scheduler-granted syncs, simulated minutes"),
        ("allPassesPerInstall", "every pass (whatever its trigger) per install, mean"),
        ("passesPerOpen", "every pass per app open"),
        ("opensPerInstall", "app opens per install, mean"),
        ("unsyncedAt24hPercent", "edits not on the server 24 h after they were saved, percent"),
        ("nightShare", "background runs that started between 02:00 and 05:00, percent"),
        ("specMet", "1 when the spec (median gap ≤ 1.5 × desired, count ≥ 80 % of expected) is met, else 0"),
        ("freshGuaranteeObservedPercent", "installs whose first guarantee already carried a measured gap, percent"),
        ("reportedMedianGapMinutes", "the gap the installs' last guarantee reported, median, simulated minutes"),
        ("receivedWithinHourPercent",
         "edits from another device of the account that reached these devices within one simulated hour, percent"),
        ("receivedPercent", "the same edits that reached these devices at all during the run, percent"),
        ("receivedMedianMinutes", "how long those edits took to arrive, median (an edit that never arrived counts "
            + "as later than any), simulated minutes"),
    ]

    static let runFigures: [(name: String, meaning: String)] = [
        ("propagation.p50SimMinutes", "saved on one device → applied on another, median, simulated minutes"),
        ("propagation.p95SimMinutes", "the same, 95th percentile"),
        ("propagation.arrivedWithinHourPercent",
         "(edit, other device of its account) pairs where the edit arrived within one simulated hour, percent"),
        ("propagation.arrivedPercent", "the same pairs where the edit arrived at all during the run, percent"),
        ("ops.saved", "edits saved during the run"),
    ]

    /// The devices of a variant: the device whose id is `name`, or those whose id starts with `name-`.
    static func variantDevices(_ name: String, in ids: [String]) -> [String] {
        ids.filter { $0 == name || $0.hasPrefix(name + "-") }
    }

    /// A variant figure's name split into variant and figure (`variants.<variant>.<figure>`), nil otherwise.
    static func variantFigure(_ name: String) -> (variant: String, figure: String)? {
        guard name.hasPrefix("variants.") else { return nil }
        let rest = name.dropFirst("variants.".count)
        guard let dot = rest.lastIndex(of: ".") else { return nil }
        let figure = String(rest[rest.index(after: dot)...])
        guard platformFigures.contains(where: { $0.name == figure }), dot > rest.startIndex else { return nil }
        return (String(rest[..<dot]), figure)
    }

    static var knownNames: [String] {
        Platform.allCases.flatMap { p in platformFigures.map { "platforms.\(p.rawValue).\($0.name)" } }
            + runFigures.map(\.name)
    }

    /// Every known figure a run measured (a figure it could not measure, like the median gap of a platform with no
    /// background run, is absent).
    static func measured(_ f: RunFigures, _ data: RunData) -> [String: Double] {
        var out: [String: Double] = [:]
        var rows = f.platforms.map { row in
            ("platforms.\(row.platform).", row,
                Set(data.devices.filter { $0.platform.rawValue == row.platform }.map(\.id)))
        }
        let ids = data.devices.map(\.id)
        for variant in Set(data.topology.reference.compactMap { variantFigure($0.name)?.variant }) {
            let members = Set(variantDevices(variant, in: ids))
            rows.append(("variants.\(variant).",
                f.perDevice.row(variant, data.devices.filter { members.contains($0.id) }),
                         members))
        }
        for (p, row, members) in rows {
            for (name, value) in received(by: members, f, data) { out[p + name] = value }
            let installs = Double(max(row.devices, 1))
            out[p + "syncsPerInstall"] = round3(row.syncsPerInstallMean)
            out[p + "syncsPerInstallMin"] = row.syncsPerInstall.min().map(Double.init)
            out[p + "syncsPerInstallMax"] = row.syncsPerInstall.max().map(Double.init)
            out[p + "syncs"] = Double(row.syncs)
            out[p + "expectedPerInstall"] = row.expectedPerInstall
            out[p + "medianGapMinutes"] = row.medianGapMinutes.map(round3)
            out[p + "allPassesPerInstall"] = round3(Double(row.allPasses) / installs)
            out[p + "passesPerOpen"] = row.passesPerOpen
            out[p + "opensPerInstall"] = round3(Double(row.opens) / installs)
            out[p + "unsyncedAt24hPercent"] = row.unsyncedAt24hPercent
            out[p + "nightShare"] = row.nightSharePercent
            out[p + "specMet"] = row.specMet ? 1 : 0
            out[p + "freshGuaranteeObservedPercent"] = row.freshGuaranteeObservedPercent
            out[p + "reportedMedianGapMinutes"] = row.reportedMedianGapMinutes
        }
        if f.propagation.count > 0 {
            out["propagation.p50SimMinutes"] = round3(f.propagation.p50SimSec / 60)
            out["propagation.p95SimMinutes"] = round3(f.propagation.p95SimSec / 60)
        }
        // Pairs: every edit saved during the scenario × every other device of its account.
        let accountOf = Dictionary(data.devices.map { ($0.id, $0.account) }, uniquingKeysWith: { a, _ in a })
        let peers = Dictionary(grouping: data.devices, by: \.account).mapValues { $0.count - 1 }
        var pairs = 0, arrived = 0, withinHour = 0
        for lineage in f.lineages where lineage.savedSim <= data.scenarioEndSim {
            guard let account = accountOf[lineage.device] else { continue }
            pairs += peers[account] ?? 0
            arrived += lineage.arrivals.count
            withinHour += lineage.arrivals.filter { $0.simSec <= 3_600 }.count
        }
        if pairs > 0 {
            out["propagation.arrivedWithinHourPercent"] = round3(100 * Double(withinHour) / Double(pairs))
            out["propagation.arrivedPercent"] = round3(100 * Double(arrived) / Double(pairs))
        }
        out["ops.saved"] = Double(f.opsSaved)
        return out
    }

    /// Edits saved during the scenario on another device of a member's account, and when they reached the member.
    static func received(by members: Set<String>, _ f: RunFigures, _ data: RunData) -> [String: Double] {
        let accountOf = Dictionary(data.devices.map { ($0.id, $0.account) }, uniquingKeysWith: { a, _ in a })
        // The members of each account, so an edit meets only its own account's (not every member of every account:
        // 1,200 installs each its own account made that most of seed 000's report). Only counts and a median are
        // taken of the delays, so their order does not matter.
        var membersOf: [String: [String]] = [:]
        for member in members { if let account = accountOf[member] { membersOf[account, default: []].append(member) } }
        var delays: [Double] = []
        for lineage in f.lineages where lineage.savedSim <= data.scenarioEndSim {
            guard let account = accountOf[lineage.device] else { continue }
            for member in membersOf[account] ?? [] where member != lineage.device {
                delays.append(lineage.arrivals.first { $0.device == member }?.simSec ?? .infinity)
            }
        }
        guard !delays.isEmpty else { return [:] }
        var out: [String: Double] = [:]
        let withinHour = delays.filter { $0 <= 3_600 }.count
        out["receivedWithinHourPercent"] = round3(100 * Double(withinHour) / Double(delays.count))
        out["receivedPercent"] = round3(100 * Double(delays.filter(\.isFinite).count) / Double(delays.count))
        if let m = median(delays), m.isFinite { out["receivedMedianMinutes"] = round3(m / 60) }
        return out
    }

    /// One line of the report's reference table.
    struct Row {
        let figure: ReferenceFigure
        let measured: Double?
        var within: Bool { figure.reproduced && (measured.map { figure.band.contains($0) } ?? false) }
        /// The report's "within band?": yes, no, or not reproduced and why.
        var verdict: String {
            guard figure.reproduced else { return "not reproduced: \(figure.reason ?? "")" }
            return within ? "yes" : "**no**"
        }
        var ratio: Double? {
            guard let measured, figure.published != 0 else { return nil }
            return measured / figure.published
        }
    }

    static func rows(_ data: RunData, _ f: RunFigures) -> [Row] {
        guard !data.topology.reference.isEmpty else { return [] }
        let values = measured(f, data)
        return data.topology.reference.map { Row(figure: $0, measured: values[$0.name]) }
    }

    /// The check: held when every figure is inside its band; nil for a topology without references.
    static func check(_ rows: [Row]) -> InvariantResult? {
        guard !rows.isEmpty else { return nil }
        let violations = rows.filter { !$0.within && $0.figure.reproduced }.map { row in
            Violation(device: nil, account: nil,
                      "\(row.figure.name): measured "
                          + (row.measured.map(format) ?? "nothing (not measured in this run)")
                        + ", outside the band "
                            + "\(format(row.figure.band.lowerBound))–\(format(row.figure.band.upperBound))"
                        + " around the published \(format(row.figure.published)) (\(row.figure.source))")
        }
        let judged = rows.filter(\.figure.reproduced).count
        let skipped = rows.count - judged
        return InvariantResult(checkName, violations,
                               held: "\(judged) reference figure\(judged == 1 ? "" : "s") inside their bands"
                                + (skipped > 0 ? "; \(skipped) not reproduced (not judged)" : ""))
    }

    static func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e12 ? "\(Int(x))" : String(format: "%.3g", x)
    }

    // MARK: - report

    /// The report's section: each figure beside the article's value and band (none without `reference`).
    static func blocks(_ rows: [Row]) -> [Block] {
        guard !rows.isEmpty else { return [] }
        var table = Table(["figure", "published", "measured", "ratio", "band", "within band?", "source"])
        for row in rows {
            let f = row.figure
            table.add([
                .code(f.name), Table.Cell(format(f.published)), Table.Cell(row.measured.map(format) ?? "—"),
                Table.Cell(row.ratio.map { String(format: "%.2f", $0) } ?? "—"),
                Table.Cell("\(format(f.band.lowerBound))–\(format(f.band.upperBound))"), Table.Cell(row.verdict),
                Table.Cell("\(f.source)" + (f.section.map { ", \($0)" } ?? "") + (f.quote.map { ": \"\($0)\"" } ?? "")
                    + (f.reading ? " (a reading of the article's words, not a number it printed)" : "")),
            ])
        }
        return Block.section("Reference figures (the articles' tables)", "Each figure the topology's `reference` "
            + "names, beside the article's value; a figure outside its band fails the run (check `\(checkName)`). "
            + "docs/SEEDS.md says how each published figure was read.", table)
    }

    static func json(_ rows: [Row]) -> JSONValue {
        .array(rows.map { row in
            .object([
                ("figure", .string(row.figure.name)), ("published", .double(row.figure.published)),
                ("measured", row.measured.map { .double($0) } ?? .null),
                ("ratio", row.ratio.map { .double(round3($0)) } ?? .null),
                ("band", .array([.double(row.figure.band.lowerBound), .double(row.figure.band.upperBound)])),
                ("within", .bool(row.within)), ("source", .string(row.figure.source)),
                ("section", row.figure.section.map { .string($0) } ?? .null),
                ("quote", row.figure.quote.map { .string($0) } ?? .null), ("reading", .bool(row.figure.reading)),
                ("reproduced", .bool(row.figure.reproduced)),
                ("reason", row.figure.reason.map { .string($0) } ?? .null), ("fails", .bool(row.figure.fails)),
            ])
        })
    }
}

extension Topology {
    /// `reference: { "platforms.ios.syncsPerInstall": { seed: 19, band: [12, 28], source: "seed 000, 7 days" } }`.
    /// `variants.<V>.<figure>` measures a platform figure over the devices whose id is V or starts with "V-".
    static func readReference(_ r: NodeReader, topology t: Topology) throws(TopologyError) -> [ReferenceFigure] {
        guard case .object(let pairs) = r.node.value else { throw r.fail("expected an object") }
        let known = ReferenceFigures.knownNames
        var figures: [ReferenceFigure] = []
        for pair in pairs {
            let key = r.child(pair.key)
            if let variant = ReferenceFigures.variantFigure(pair.key) {
                guard !ReferenceFigures.variantDevices(variant.variant, in: t.devices.map(\.id)).isEmpty else {
                    throw r.fail("no device of this topology is \"\(variant.variant)\" or starts with "
                                 + "\"\(variant.variant)-\"", at: pair.node, key: key)
                }
            } else if !known.contains(pair.key) {
                throw r.fail("unknown figure \"\(pair.key)\"; known figures: \(known.joined(separator: ", ")), and "
                             + "variants.<device-id-prefix>.<any platform figure>", at: pair.node, key: key)
            }
            let f = NodeReader(file: r.file, node: pair.node, path: key)
            try f.onlyKeys(["seed", "band", "source", "section", "quote", "reading", "reproduced", "reason", "fails"])
            guard let published = try f.number("seed") else {
                throw f.fail("missing required key \"seed\" (the figure the article published)")
            }
            guard let band = try f.array("band") else {
                throw f.fail("missing required key \"band\" ([low, high], the measured values that pass)")
            }
            var bounds: [Double] = []
            for item in band {
                guard case .number(let d) = item.node.value else {
                    throw item.fail("expected a number, got \(item.node.typeName)")
                }
                bounds.append(d)
            }
            guard bounds.count == 2, bounds[0] <= bounds[1] else {
                throw f.fail("expected [low, high] with low ≤ high", at: pair.node["band"], key: f.child("band"))
            }
            var figure = ReferenceFigure(name: pair.key, published: published, band: bounds[0]...bounds[1],
                                         source: try f.string("source") ?? "")
            figure.section = try f.string("section")
            figure.quote = try f.string("quote")
            figure.reading = try f.bool("reading") ?? false
            figure.reproduced = try f.bool("reproduced") ?? true
            figure.reason = try f.string("reason")
            figure.fails = try f.bool("fails") ?? false
            try ReferenceFigures.validate(figure, f, node: pair.node)
            figures.append(figure)
        }
        try ReferenceFigures.validate(figures, r, topology: t, nodes: pairs.map(\.node))
        return figures
    }
}
