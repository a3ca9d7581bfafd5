import Foundation
import SyncProtocol
import Testing

/// The simulation against the lab's truth: a shipped topology run as real processes (the end-to-end harness) and as
/// a simulation must reach the same verdict, and the counts that do not depend on machine timing must agree — ops
/// exactly, passes per trigger per device and syncs per platform within a tolerance (docs/SIMULATION.md says why
/// they may differ at all: a real run's hops take what the OS gives them, so a grant near a boundary can fall either
/// side of it).
@Suite(.serialized) struct SimulationDifferentialTests {
    /// |real − sim| may be at most this many, or this share of the larger, whichever is more.
    static let slack = 2
    static let share = 0.1

    static func close(_ real: Int, _ sim: Int) -> Bool {
        abs(real - sim) <= max(slack, Int((Double(max(real, sim)) * share).rounded(.up)))
    }

    /// What two reports disagree on, beyond the tolerance; empty when they agree.
    static func differences(real: JSONValue, sim: JSONValue) -> [String] {
        var out: [String] = []
        if real["verdict"] != sim["verdict"] { out.append("verdict \(real["verdict"]!) vs \(sim["verdict"]!)") }
        for key in ["saved", "applied", "needsAttention"] where real["ops"]?[key] != sim["ops"]?[key] {
            out.append("ops.\(key) \(real["ops"]?[key] ?? .null) vs \(sim["ops"]?[key] ?? .null)")
        }
        let realDevices = real["passes"]?["byDevice"]?.objectValue ?? []
        let simDevices = sim["passes"]?["byDevice"]?.objectValue ?? []
        let devices = Set(realDevices.map(\.0) + simDevices.map(\.0)).sorted()
        for device in devices {
            let r = realDevices.first { $0.0 == device }?.1.objectValue ?? []
            let s = simDevices.first { $0.0 == device }?.1.objectValue ?? []
            for trigger in Set(r.map(\.0) + s.map(\.0)).sorted() {
                let a = r.first { $0.0 == trigger }?.1.intValue ?? 0
                let b = s.first { $0.0 == trigger }?.1.intValue ?? 0
                if !close(a, b) { out.append("\(device) \(trigger) passes \(a) vs \(b)") }
            }
        }
        for row in real["platforms"]?.arrayValue ?? [] {
            let platform = row["platform"]?.stringValue ?? ""
            let other = sim["platforms"]?.arrayValue?.first { $0["platform"]?.stringValue == platform }
            let a = row["syncs"]?.intValue ?? 0
            let b = other?["syncs"]?.intValue ?? -1_000
            if !close(a, b) { out.append("\(platform) syncs \(a) vs \(b)") }
        }
        return out
    }

    @Test(arguments: ["quickstart", "offline-edits"])
    func realProcessesAndTheSimulationAgree(_ name: String) throws {
        let real = try EndToEndTests.run(name, limit: 180)
        defer { EndToEndTests.expectNoneLeft(real) }
        let sim = try SimulationTests.sim([SimulationTests.topology(name)])
        #expect(real.status == 0, "\(real.failedInvariants)\n\(real.output)")
        #expect(sim.status == real.status, "\(sim.output)")
        let simReport = try JSONValue.parse(String(contentsOfFile: "\(sim.out)/report.json", encoding: .utf8))
        #expect(real.report["simulated"]?.boolValue == false)
        #expect(simReport["simulated"]?.boolValue == true)
        #expect((real.report["passes"]?["total"]?.intValue ?? 0) > 5)
        let differences = Self.differences(real: real.report, sim: simReport)
        #expect(differences.isEmpty, "\(differences)")
    }

    @Test func theComparisonSeesADifferentRun() throws {
        // The same topology with another seed plays other behaviour and other platform draws: the comparison must
        // notice, or its agreement above would mean nothing.
        let a = try SimulationTests.sim([SimulationTests.topology("hint-loss"), "--seed", "1"])
        let b = try SimulationTests.sim([SimulationTests.topology("hint-loss"), "--seed", "2"])
        let first = try JSONValue.parse(String(contentsOfFile: "\(a.out)/report.json", encoding: .utf8))
        let second = try JSONValue.parse(String(contentsOfFile: "\(b.out)/report.json", encoding: .utf8))
        #expect(Self.differences(real: first, sim: first).isEmpty)
        #expect(!Self.differences(real: first, sim: second).isEmpty)
    }
}
