import Foundation
import LabKit
import SyncProtocol

/// `synclab-device status --db PATH`: a device's status and seed-001 metrics from its database alone, for a device
/// that is running (WAL lets it read beside the writer) or stopped. A running pool's file is locked (the pool holds
/// its ledgers exclusively): then it exits 1 saying so, after a 1 s wait.
public enum DeviceStatusCommand {
    /// Runs the subcommand; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        let options = DeviceCommandLine.statusSpec.parseOrExit(arguments)
        guard let path = options.string("db") else {
            Output.stderr("synclab-device status: missing --db (see synclab-device status --help)\n")
            return 2
        }
        do {
            let ledger = try Ledger.openExisting(path: path)
            let now = try ledger.storedClock().now()
            let status = try ledger.storedStatus(now: now)
            Output.stdout(options.has("json") ? status.description + "\n" : render(status))
            return 0
        } catch {
            Output.stderr("synclab-device status: \(error)\n")
            return 1
        }
    }

    /// A person's view of the status JSON.
    public static func render(_ status: JSONValue) -> String {
        func text(_ value: JSONValue?) -> String {
            guard let value else { return "—" }
            if case .string(let s) = value { return s }
            if case .null = value { return "—" }
            return value.description
        }
        func duration(_ value: JSONValue?) -> String {
            guard let seconds = value?.doubleValue else { return "—" }
            let s = Int(seconds.rounded())
            if s >= 86_400 { return "\(s / 86_400)d \((s % 86_400) / 3600)h" }
            if s >= 3600 { return "\(s / 3600)h \((s % 3600) / 60)m" }
            if s >= 60 { return "\(s / 60)m \(s % 60)s" }
            return "\(s)s"
        }
        let metrics = status["metrics"]
        var out = "device \(text(status["device"])) (\(text(status["platform"])), account \(text(status["account"])))\n"
        out += "  cursor \(text(status["cursor"])), head last seen \(text(status["head"])), "
            + "cursor lag \(text(metrics?["cursorLag"]))\n"
        let freshness = status["freshness"]
        out += "  freshness \(text(freshness?["kind"]))"
        if freshness?["ageSec"] != nil { out += ", data age \(duration(freshness?["ageSec"]))" }
        out += "\n  guarantee \(text(status["guarantee"]))\n"
        out += "  ops \(text(status["ops"])); pending \(text(status["pending"]))\n"
        out += "  oldest pending op: \(duration(metrics?["oldestPendingAgeSec"])) old\n"
        let atOpen = metrics?["dataAgeAtOpen"]
        out += "  data age at app open: \(text(atOpen?["opens"])) opens, median \(duration(atOpen?["medianSec"])), "
            + "p95 \(duration(atOpen?["p95Sec"])), max \(duration(atOpen?["maxSec"])), "
            + "never synced \(text(atOpen?["neverSynced"]))\n"
        let passes = metrics?["passes"]
        out += "  passes \(text(passes?["total"])) by trigger \(text(passes?["byTrigger"])), "
            + "by outcome \(text(passes?["byOutcome"]))\n"
        out += "  median gap between successful passes: \(duration(metrics?["observedMedianGapSec"])); "
            + "between scheduled runs: \(duration(metrics?["scheduledMedianGapSec"]))\n"
        out += "  unknown outcomes \(text(metrics?["unknownOutcomes"])); retries before resolution "
            + "\(text(metrics?["retriesBeforeResolution"]))\n"
        if let attention = metrics?["needsAttention"]?.arrayValue, !attention.isEmpty {
            out += "  needs attention:\n"
            for item in attention { out += "    \(text(item["key"])): \(text(item["reason"]))\n" }
        }
        return out
    }
}
