import Foundation
import LabTestSupport
import SyncProtocol
import Testing

/// `synclab bench --quick` through the real binary: every figure of bench.json was measured and is sane. Speed is
/// the bench's business, so nothing here compares a figure with a target.
@Suite(.serialized) struct BenchTests {
    /// The figures issue 7 names (dots are nesting in bench.json).
    static let keys = [
        "floor.zmqRoundTripUs", "floor.sqliteCommitUs", "floor.propagationMs", "propagation.devices3.p50Ms",
        "propagation.devices3.p99Ms", "propagation.devices100.p50Ms", "server.opsPerSec", "server.pullChangesPerSec",
        "broker.hintsPerSec", "broker.rawFanoutPerSec", "memory.deviceIdleMB", "memory.serverMB",
        // Issue 17: CURVE on and off in the same run.
        "floor.zmqRoundTripCurveUs", "propagation.devices3plain.p50Ms", "server.curve.opsPerSec",
        "server.curve.pullChangesPerSec",
        // Cost growth (issue 18): the quick sizes, CPU per delivered edit, the exponent.
        "propagation.devices10.p50Ms", "propagation.devices30.p50Ms", "propagation.devices3.cpuMsPerEdit",
        "propagation.devices30.cpuMsPerEditAll",
        // The simulation (issue 16): --quick plays seven-days and a day of 100 devices.
        "simulation.sevenDays.wallSec", "simulation.sevenDays.reportSec", "simulation.sevenDays.deviceDaysPerSec",
        "simulation.scale.devices", "simulation.scale.wallSec", "simulation.scale.deviceDaysPerSec",
        "simulation.scale.memoryPerDeviceKB", "simulation.scale.events",
        // Issue 24: what a hop from idle costs with and without libzmq, and the lab's messages with no work.
        "floor.zmqRoundTripIdleCpuUs", "floor.socketRoundTripIdleUs", "floor.socketRoundTripIdleCpuUs",
        "floor.skeleton.devices3.p50Ms", "floor.skeleton.devices3.p99Ms", "floor.skeleton.devices3.cpuMsPerEdit",
        "floor.skeleton.devices100.p50Ms", "floor.skeleton.devices100.cpuMsPerEdit",
    ]

    static func figure(_ json: JSONValue, _ key: String) -> Double? {
        var value: JSONValue? = json
        for part in key.split(separator: ".") { value = value?[String(part)] }
        return value?.doubleValue
    }

    /// `synclab bench` with `arguments` into `home`'s folder `bench` (`out`), stopped after `limit` seconds: it must
    /// exit 0 and bench.json list no failures.
    static func bench(_ arguments: [String], in home: TempFolder, limit: Double,
                      sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (output: String, json: JSONValue, out: String)
    {
        let out = home.file("bench")
        let (status, output) = try EndToEndTests.synclab(
            ["bench"] + arguments + ["--out", out, "--bin", EndToEndTests.binDirectory], limit: limit)
        #expect(status == 0, "\(output)", sourceLocation: sourceLocation)
        let json = try JSONValue.parse(try String(contentsOfFile: out + "/bench.json", encoding: .utf8))
        #expect(json["failures"]?.arrayValue?.isEmpty == true, "\(json["failures"] ?? .null)",
                sourceLocation: sourceLocation)
        return (output, json, out)
    }

    @Test("a quick bench measures every figure, each finite and positive, and every ratio can be computed")
    func quickBench() throws {
        // The NATS and Redis peers are skipped: no test needs their servers (`scripts/lab bench` runs them).
        // Bounded: a bench that hangs is stopped and the test fails on the missing figures.
        let home = TempFolder()
        let (output, json, out) = try Self.bench(["--quick", "--no-peers"], in: home, limit: 150)
        #expect(json["quick"]?.boolValue == true)
        #expect((json["machine"]?["cores"]?.intValue ?? 0) > 0)
        for key in Self.keys {
            let value = Self.figure(json, key)
            #expect(value.map { $0.isFinite && $0 > 0 } == true, "\(key) = \(String(describing: value))")
        }
        // Each figure beside its floor or raw counterpart: the ratios the table prints are finite and positive.
        let floor = Self.figure(json, "floor.propagationMs") ?? .nan
        let ratios = [
            (Self.figure(json, "propagation.devices3.p50Ms") ?? .nan) / floor,
            (Self.figure(json, "propagation.devices100.p50Ms") ?? .nan) / floor,
            (Self.figure(json, "broker.hintsPerSec") ?? .nan) / (Self.figure(json, "broker.rawFanoutPerSec") ?? .nan),
            (Self.figure(json, "server.opsPerSec") ?? .nan) * (Self.figure(json, "floor.sqliteCommitUs") ?? .nan) / 1e6,
        ]
        for ratio in ratios { #expect(ratio.isFinite && ratio > 0) }
        // The floor is made of its parts: three commits and two and a half round trips.
        let rt = Self.figure(json, "floor.zmqRoundTripUs") ?? .nan
        let commit = Self.figure(json, "floor.sqliteCommitUs") ?? .nan
        #expect(abs(floor - (3 * commit + 2.5 * rt) / 1000) < 0.01)
        #expect(output.contains("propagation p50, 3 devices"))
        #expect(output.contains("growth exponent, processes"))
        // An exponent may come out of any sign on a busy machine; it must have been computed.
        for key in ["growth.processes.cpuExponent", "growth.processes.p50Exponent"] {
            #expect(Self.figure(json, key)?.isFinite == true, "\(key)")
        }
        #expect(json["peers"] == nil, "peers were skipped, so bench.json has none")
        let html = try String(contentsOfFile: out + "/bench.html", encoding: .utf8)
        #expect(html.components(separatedBy: "<svg").count - 1 == 3 && !html.contains("<script"))
    }

    @Test("bench --scale --quick plays load-10000's shape at 200 pooled devices: it passes and reports its memory")
    func quickScale() throws {
        let home = TempFolder()
        let (output, json, out) = try Self.bench(["--scale", "--quick"], in: home, limit: 120)
        #expect(Self.figure(json, "scale.devices") == 200)
        #expect(Self.figure(json, "scale.pools") == 2)
        #expect(Self.figure(json, "scale.passed") == 1)
        for key in ["scale.wallSec", "scale.events", "scale.passes", "scale.launcherPeakMB", "scale.launcherRunPeakMB",
                    "scale.poolResidentMBMedian", "scale.poolPeakMBMax", "scale.cpuSeconds"] {
            let value = Self.figure(json, key)
            #expect(value.map { $0.isFinite && $0 > 0 } == true, "\(key) = \(String(describing: value))")
        }
        #expect(output.contains("scale: 200 devices in 2 pools"), "\(output)")
        // The run's own report carries the launcher's memory and each pool's resident set.
        let report = try JSONValue.parse(try String(contentsOfFile: out + "/load-200-quick/report.json",
                                                    encoding: .utf8))
        #expect(report["verdict"]?.stringValue == "pass")
        let pools = report["cost"]?["poolMemory"]?.arrayValue ?? []
        #expect(pools.map { $0["pool"]?.stringValue } == ["pool-1", "pool-2"])
        #expect(pools.allSatisfy { ($0["devices"]?.intValue ?? 0) == 100 && ($0["residentMB"]?.doubleValue ?? 0) > 0
            && ($0["peakMB"]?.doubleValue ?? 0) >= ($0["residentMB"]?.doubleValue ?? .infinity) })
        #expect((report["cost"]?["launcherPeakMB"]?.doubleValue ?? 0) > 0)
        let markdown = try String(contentsOfFile: out + "/load-200-quick/report.md", encoding: .utf8)
        #expect(markdown.contains("| pool-2 | 100 |") && markdown.contains("Launcher: "))
    }
}
