import LabKit
import SyncProtocol

/// The expanded schedule: each fault with its target and times, the steps they became, and how many drawn faults the
/// limits skipped.
public struct NemesisSchedule: Sendable {
    public struct Fault: Sendable, Equatable {
        public var kind: Nemesis.Kind
        public var target: String
        public var start: Double
        public var end: Double
        public var point: String?
        /// The index of the generator that drew it.
        public var generator: Int
    }

    public var faults: [Fault] = []
    public var skipped = 0
    public var steps: [ScenarioStep] = []

    /// Faults by kind, then by target.
    public var counts: [(kind: String, total: Int, byTarget: [(String, Int)])] {
        Nemesis.Kind.allCases.compactMap { kind in
            let ofKind = faults.filter { $0.kind == kind }
            guard !ofKind.isEmpty else { return nil }
            var byTarget: [String: Int] = [:]
            for fault in ofKind { byTarget[fault.target, default: 0] += 1 }
            return (kind.rawValue, ofKind.count, byTarget.keys.sorted().map { ($0, byTarget[$0]!) })
        }
    }

    /// `nemesis.json5` of the run folder: the schedule as the scenario steps it became, which a topology's
    /// `scenario` takes as they are (replay without the generators).
    func fileText(seed: UInt64) -> String {
        var text = "// The nemesis schedule of this run, drawn from seed \(seed): \(faults.count) faults "
            + "(\(skipped) drawn faults skipped by the limits).\n"
        text += "// Each line is an ordinary scenario step: paste `scenario` into a topology to replay it without "
            + "generators.\n"
        let counts = JSONValue.object(self.counts.map { ($0.kind, .object($0.byTarget.map { ($0.0, .int($0.1)) })) })
        text += "{\n  seed: \(seed),\n  faults: \(faults.count),\n  skipped: \(skipped),\n  byKind: \(counts),\n"
        text += "  scenario: [\n"
        for step in steps { text += "    \(step.json),\n" }
        text += "  ],\n}\n"
        return text
    }

    /// The event fields of `nemesis.schedule`, which the report reads.
    var fields: [(String, JSONValue)] {
        [("faults", .int(faults.count)), ("skipped", .int(skipped)), ("steps", .int(steps.count)),
         ("byKind", .object(counts.map { ($0.kind, .object($0.byTarget.map { ($0.0, .int($0.1)) })) }))]
    }
}
