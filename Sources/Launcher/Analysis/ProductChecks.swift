import LabKit
import SyncDevice
import SyncProtocol

/// What a product owner states beside the invariants (topology key `checks`), each off unless given. Seed 001:
/// "age of the data at the moment the app opens, which is the number the user experiences".
public struct ProductCheckSettings: Sendable, Equatable {
    /// How the figures are grouped: each device on its own, or every device of a platform together.
    public enum Scope: String, Sendable, CaseIterable { case device, platform }

    /// At least `percent` % of the app opens during the scenario show data no older than the budget (each device's
    /// `freshnessBudgetMin`, or `budgetMin`).
    public struct DataAgeAtOpen: Sendable, Equatable {
        public var percent: Double
        public var budgetSec: Double?
        public var per: Scope
    }

    /// At most `maxPercent` % of the edits saved during the scenario are not on the server 24 simulated hours later
    /// (or by the end of the scenario, if sooner).
    public struct UnsyncedAt24h: Sendable, Equatable {
        public var maxPercent: Double
        public var per: Scope
    }

    /// At most `maxPercent` % of a device's passes during the scenario did nothing (sent no op, applied no change):
    /// the battery and budget a design without unique work (KEEP) spends on passes that find nothing to do.
    public struct WastedPasses: Sendable, Equatable {
        public var maxPercent: Double
    }

    public var dataAgeAtOpen: DataAgeAtOpen?
    public var wastedPasses: WastedPasses?
    public var unsyncedAt24h: UnsyncedAt24h?
    /// Every op settled (completed or refused) within this many simulated seconds of the heal's start.
    public var settledAfterHealSec: Double?

    public init() {}

    public var isEmpty: Bool {
        dataAgeAtOpen == nil && unsyncedAt24h == nil && settledAfterHealSec == nil && wastedPasses == nil
    }

    public static let names = ["data-age-at-open", "unsynced-at-24h", "settled-after-heal", "wasted-passes"]
}

/// The product checks of a run, computed from the devices' files (opens, ledger) and the server's events.
enum ProductChecks {
    static func all(_ data: RunData) -> [InvariantResult] {
        let settings = data.topology.checks
        var results: [InvariantResult] = []
        if let check = settings.dataAgeAtOpen { results.append(dataAgeAtOpen(data, check)) }
        if let check = settings.unsyncedAt24h { results.append(unsyncedAt24h(data, check)) }
        if let limit = settings.settledAfterHealSec { results.append(settledAfterHeal(data, within: limit)) }
        if let check = settings.wastedPasses { results.append(wastedPasses(data, check)) }
        return results
    }

    /// Groups devices as the check's scope says: one group per device, or one per platform.
    static func groups(_ data: RunData, _ scope: ProductCheckSettings.Scope)
        -> [(name: String, devices: [DeviceData])] {
        switch scope {
        case .device:
            return data.devices.map { ($0.id, [$0]) }
        case .platform:
            return Platform.allCases.compactMap { platform in
                let devices = data.devices.filter { $0.platform == platform }
                return devices.isEmpty ? nil : (platform.rawValue, devices)
            }
        }
    }

    static func subject(_ group: (name: String, devices: [DeviceData]), _ scope: ProductCheckSettings.Scope)
        -> Violation {
        Violation(device: scope == .device ? group.name : nil,
                  account: scope == .device ? group.devices.first?.account : nil, "")
    }

    static func dataAgeAtOpen(_ data: RunData, _ check: ProductCheckSettings.DataAgeAtOpen) -> InvariantResult {
        var violations: [Violation] = []
        var opens = 0, within = 0
        for group in groups(data, check.per) {
            var groupOpens = 0, groupWithin = 0
            var worst: (age: Double?, sim: Double)?
            for device in group.devices {
                let budget = check.budgetSec ?? device.settings.freshnessBudgetSec
                for open in device.state.opens where open.sim < data.scenarioEndSim {
                    groupOpens += 1
                    if let age = open.dataAgeSec, age <= budget {
                        groupWithin += 1
                    } else if worst == nil || (worst!.age ?? .infinity) < (open.dataAgeSec ?? .infinity) {
                        worst = (open.dataAgeSec, open.sim)
                    }
                }
            }
            opens += groupOpens
            within += groupWithin
            guard groupOpens > 0 else { continue }
            let percent = 100 * Double(groupWithin) / Double(groupOpens)
            if percent < check.percent {
                let budget = check.budgetSec ?? group.devices[0].settings.freshnessBudgetSec
                let base = subject(group, check.per)
                var text = "\(group.name): \(groupWithin) of \(groupOpens) opens (\(formatPercent(percent))) showed "
                    + "data "
                    + "within the \(formatSim(budget)) budget; at least \(formatPercent(check.percent)) required"
                if let worst {
                    text += "; worst: " + (worst.age.map { "data \(formatSim($0)) old" } ?? "never synced")
                        + " at \(formatSim(worst.sim))"
                }
                violations.append(Violation(device: base.device, account: base.account, text))
            }
        }
        return InvariantResult("data-age-at-open", violations,
                               held: "\(within) of \(opens) opens within budget; at least "
                                + "\(formatPercent(check.percent)) per \(check.per.rawValue)")
    }

    static func unsyncedAt24h(_ data: RunData, _ check: ProductCheckSettings.UnsyncedAt24h) -> InvariantResult {
        var appliedAt: [String: Double] = [:]
        var saved: [(key: String, device: String, sim: Double)] = []
        for event in data.events {
            if event.proc == "server", event.type == EventCatalogue.opApplied, let key = event.string("key"),
                appliedAt[key] == nil {
                appliedAt[key] = event.sim
            } else if event.type == EventCatalogue.opSaved, data.device(event.proc) != nil,
                let key = event.string("key"),
                      event.sim <= data.scenarioEndSim {
                saved.append((key, event.proc, event.sim))
            }
        }
        var violations: [Violation] = []
        var total = 0, late = 0
        for group in groups(data, check.per) {
            let ids = Set(group.devices.map(\.id))
            let mine = saved.filter { ids.contains($0.device) }
            guard !mine.isEmpty else { continue }
            var unsynced: [(key: String, device: String, sim: Double)] = []
            for op in mine {
                let deadline = min(op.sim + 86_400, data.scenarioEndSim)
                if let applied = appliedAt[op.key], applied <= deadline { continue }
                unsynced.append(op)
            }
            total += mine.count
            late += unsynced.count
            let percent = 100 * Double(unsynced.count) / Double(mine.count)
            if percent > check.maxPercent, let first = unsynced.first {
                let base = subject(group, check.per)
                violations.append(Violation(device: base.device, account: base.account,
                    "\(group.name): \(unsynced.count) of \(mine.count) edits (\(formatPercent(percent))) were not on "
                        + "the "
                        + "server 24 h after they were saved; at most \(formatPercent(check.maxPercent)) allowed; "
                            + "first: "
                        + "op \(first.key) saved on \(first.device) at \(formatSim(first.sim))"))
            }
        }
        return InvariantResult("unsynced-at-24h", violations,
                               held: "\(late) of \(total) edits unsynced at 24 h; at most "
                                + "\(formatPercent(check.maxPercent)) per \(check.per.rawValue)")
    }

    static func settledAfterHeal(_ data: RunData, within limit: Double) -> InvariantResult {
        guard let heal = data.events.first(where: { $0.proc == "launcher" && $0.type == EventCatalogue.phase
            && $0.string("name") == "heal" })
        else {
            return InvariantResult("settled-after-heal", [Violation(device: nil, account: nil, "the run never healed")],
                                   held: "")
        }
        var violations: [Violation] = []
        var settled = 0
        for device in data.devices {
            for op in device.ops {
                if op.status.isPending {
                    violations.append(Violation(device: device.id, account: device.account,
                        "op \(op.key) on \(device.id) is still \(op.status.rawValue) at the end"))
                    continue
                }
                settled += 1
                guard let done = op.completedWall, done > heal.wall else { continue }
                let after = Double(done - heal.wall) / 1_000_000 * data.timeScale
                if after > limit {
                    violations.append(Violation(device: device.id, account: device.account,
                        "op \(op.key) on \(device.id) settled \(formatSim(after)) after heal began; at most "
                            + "\(formatSim(limit)) allowed"))
                }
            }
        }
        return InvariantResult("settled-after-heal", violations,
                               held: "\(settled) ops settled, none later than \(formatSim(limit)) after heal began")
    }

    static func wastedPasses(_ data: RunData, _ check: ProductCheckSettings.WastedPasses) -> InvariantResult {
        var total: [String: Int] = [:]
        var empty: [String: Int] = [:]
        for event in data.events where event.type == EventCatalogue.passEnd {
            // A pass belongs to the scenario when it started before the scenario's end (as "Passes by trigger"
            // counts them); heal's and quiesce's passes are not the design's.
            let started = event.sim - (event.fields["durationSec"]?.doubleValue ?? 0)
            guard started < data.scenarioEndSim, data.device(event.proc) != nil else { continue }
            total[event.proc, default: 0] += 1
            if (event.int("sent") ?? 0) == 0 && (event.int("pulled") ?? 0) == 0 { empty[event.proc, default: 0] += 1 }
        }
        var violations: [Violation] = []
        for device in data.devices {
            let passes = total[device.id] ?? 0
            guard passes > 0 else { continue }
            let wasted = empty[device.id] ?? 0
            let percent = 100 * Double(wasted) / Double(passes)
            if percent > check.maxPercent {
                violations.append(Violation(device: device.id, account: device.account,
                    "\(device.id): \(wasted) of \(passes) passes (\(formatPercent(percent))) sent nothing and applied "
                        + "nothing; at most \(formatPercent(check.maxPercent)) allowed"))
            }
        }
        let all = total.values.reduce(0, +), wasted = empty.values.reduce(0, +)
        return InvariantResult("wasted-passes", violations,
                               held: "\(wasted) of \(all) passes did nothing; at most "
                                + "\(formatPercent(check.maxPercent)) per device")
    }

    static func formatPercent(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) %" : String(format: "%.1f %%", value)
    }
}
