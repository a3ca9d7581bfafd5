import LabKit
import SQLite
import SyncProtocol

/// Seed 001's metrics, read from the ledger alone (so `synclab-device status --db` works on a stopped device):
/// age of the oldest pending op, cursor lag, data age at each app open, passes by trigger, unknown outcomes and
/// retries before resolution.
extension Ledger {
    /// The run's clock as the device stored it.
    public func storedClock() throws -> SimClock {
        let epoch = Int64(try stateDouble("epoch_micros") ?? Double(SimClock.wallMicros()))
        return SimClock(epochMicros: epoch, scale: try stateDouble("time_scale") ?? 1)
    }

    /// Op counts by status, as the `ops` object of `status`.
    public func countsJSON() throws -> (ops: JSONValue, pending: Int) {
        let counts = try counts()
        let ops = JSONValue.object(OpStatus.allCases.map { ($0.rawValue, .int(counts[$0] ?? 0)) })
        let pending = OpStatus.allCases.filter(\.isPending).reduce(0) { $0 + (counts[$1] ?? 0) }
        return (ops, pending)
    }

    /// Every metric, at simulated second `now`.
    public func metrics(now: Double) throws -> [(String, JSONValue)] {
        let clock = try storedClock()
        let cursor = try cursor()
        let head = try database.scalarInt("SELECT value FROM state WHERE key = 'head'") ?? 0
        var out: [(String, JSONValue)] = []

        let oldestWall = try database.first(
            "SELECT min(saved_wall) FROM ops WHERE status NOT IN ('completed', 'needsAttention')"
        ) { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
        out.append(("oldestPendingAgeSec", oldestWall.map { .double(round3(now - clock.sim(atWall: $0))) } ?? .null))
        out.append(("cursorLag", .int(max(0, head - cursor))))

        let ages = try database.query("SELECT data_age_sec FROM opens ORDER BY sim") {
            $0.isNull(0) ? nil : $0.double(0)
        }
        let known = ages.compactMap { $0 }.sorted()
        var atOpen: [(String, JSONValue)] = [("opens", .int(ages.count)),
                                             ("neverSynced", .int(ages.count - known.count))]
        if !known.isEmpty {
            atOpen += [("medianSec", .double(round3(percentile(known, 0.5)))),
                       ("p95Sec", .double(round3(percentile(known, 0.95)))), ("maxSec", .double(round3(known.last!)))]
        }
        out.append(("dataAgeAtOpen", .object(atOpen)))

        var byTrigger: [(String, JSONValue)] = []
        try database.forEach("SELECT trigger, count(*) FROM passes GROUP BY trigger ORDER BY trigger", []) {
            byTrigger.append(($0.string(0), .int($0.int(1))))
        }
        var byOutcome: [(String, JSONValue)] = []
        try database.forEach("SELECT coalesce(outcome, 'running'), count(*) FROM passes GROUP BY 1 ORDER BY 1", []) {
            byOutcome.append(($0.string(0), .int($0.int(1))))
        }
        let total = try database.scalarInt("SELECT count(*) FROM passes") ?? 0
        let background = try database.scalarInt(
            "SELECT count(*) FROM passes WHERE trigger IN ('push', 'periodic', 'opportunistic', 'connectivity')") ?? 0
        out.append(("passes", .object([("total", .int(total)), ("byTrigger", .object(byTrigger)),
                                       ("byOutcome", .object(byOutcome)), ("backgroundTriggered", .int(background))])))

        out.append(("unknownOutcomes", .int(try database.scalarInt(
            "SELECT value FROM state WHERE key = 'unknown_outcomes'") ?? 0)))
        let retries = try database.query("SELECT attempts FROM ops WHERE status = 'completed'") {
            max(0, $0.int(0) - 1)
        }
        var resolution: [(String, JSONValue)] = [("completed", .int(retries.count))]
        if !retries.isEmpty {
            resolution += [("meanRetries", .double(round3(Double(retries.reduce(0, +)) / Double(retries.count)))),
                           ("maxRetries", .int(retries.max() ?? 0))]
        }
        out.append(("retriesBeforeResolution", .object(resolution)))

        let attention = try database.query("""
            SELECT key, coalesce(last_error, '') FROM ops WHERE status = 'needsAttention' ORDER BY local_seq LIMIT 20
            """) { JSONValue.object([("key", .string($0.string(0))), ("reason", .string($0.string(1)))]) }
        out.append(("needsAttention", .array(attention)))

        let successTimes = try database.query("SELECT ended_sim FROM passes WHERE success = 1 ORDER BY id") {
            $0.double(0)
        }
        out.append(("observedMedianGapSec", Guarantee.medianGap(successTimes).map { .double(round3($0)) } ?? .null))
        let scheduled = try database.query("""
            SELECT started_sim FROM passes WHERE trigger IN ('periodic', 'opportunistic', 'interval') ORDER BY id
            """) { $0.double(0) }
        out.append(("scheduledMedianGapSec", Guarantee.medianGap(scheduled).map { .double(round3($0)) } ?? .null))
        return out
    }

    /// Freshness from the stored last successful sync and budget.
    public func storedFreshness(now: Double) throws -> Freshness {
        Freshness.at(now, lastSuccessfulSync: try stateDouble("last_sync_sim"),
                     budget: try stateDouble("freshness_budget_sec") ?? 3_600)
    }

    /// The whole status of a device as the ledger knows it (the `status` subcommand; a running device's `status`
    /// control command adds what only the live process knows).
    public func storedStatus(now: Double) throws -> JSONValue {
        let (ops, pending) = try countsJSON()
        let freshness = try storedFreshness(now: now)
        var fresh: [(String, JSONValue)] = [("kind", .string(freshness.kind))]
        switch freshness {
        case .neverSynced: break
        case .current(let at): fresh += [("syncedAtSim", .double(at)), ("ageSec", .double(round3(now - at)))]
        case .stale(let at, let age): fresh += [("syncedAtSim", .double(at)), ("ageSec", .double(round3(age)))]
        }
        let guarantee = try stateString("guarantee").flatMap { try? JSONValue.parse($0) } ?? .null
        return .object([
            ("device", .string(try stateString("device") ?? "?")),
            ("platform", .string(try stateString("platform") ?? "?")),
            ("account", .string(try stateString("account") ?? "?")), ("cursor", .int(try cursor())),
            ("head", .int(try database.scalarInt("SELECT value FROM state WHERE key = 'head'") ?? 0)),
            ("ops", ops), ("pending", .int(pending)), ("freshness", .object(fresh)), ("guarantee", guarantee),
            ("nowSim", .double(round3(now))), ("metrics", .object(try metrics(now: now))),
        ])
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, max(0, Int((Double(sorted.count - 1) * p).rounded())))
    return sorted[index]
}

func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
