/// What a topology predicts (key `expect`): which checks fail for which devices or accounts. A lesson runs the correct
/// design beside a broken one and expects exactly the broken half to fail; the run passes when exactly that happens.
public struct Expectation: Sendable, Equatable {
    /// Device id, account id, or "*" (anything) → the names of the checks expected to fail for it.
    public var failures: [String: [String]]

    public init(failures: [String: [String]]) { self.failures = failures }

    /// One expected failure, and whether the run showed it.
    public struct Item: Sendable, Equatable {
        public let subject: String
        public let check: String
        public let seen: Bool
        /// The first counter-example that showed it.
        public let example: String?
    }

    /// How a run measured up to the expectation.
    public struct Outcome: Sendable, Equatable {
        public let items: [Item]
        /// Counter-examples no expectation names: a check failed where the topology said it would hold.
        public let unexpected: [(check: String, violation: Violation)]

        public var met: Bool { items.allSatisfy(\.seen) && unexpected.isEmpty }

        public static func == (a: Outcome, b: Outcome) -> Bool {
            a.items == b.items && a.unexpected.map(\.check) == b.unexpected.map(\.check)
                && a.unexpected.map(\.violation) == b.unexpected.map(\.violation)
        }

        /// What was not met, in sentences.
        public var problems: [String] {
            items.filter { !$0.seen }.map { "expected \($0.check) to fail for \($0.subject), but it held there" }
                + unexpected.map { "\($0.check) failed where it was expected to hold: \($0.violation.text)" }
        }
    }

    static func matches(_ subject: String, _ violation: Violation) -> Bool {
        subject == "*" || subject == violation.device || subject == violation.account
    }

    /// Compares the checks' results with the expectation.
    public func evaluate(_ results: [InvariantResult]) -> Outcome {
        var items: [Item] = []
        for subject in failures.keys.sorted() {
            for check in failures[subject]! {
                let violations = results.first { $0.name == check }?.violations ?? []
                let example = violations.first { Self.matches(subject, $0) }
                items.append(Item(subject: subject, check: check, seen: example != nil, example: example?.text))
            }
        }
        var unexpected: [(check: String, violation: Violation)] = []
        for result in results {
            let subjects = failures.filter { $0.value.contains(result.name) }.map(\.key)
            for violation in result.violations where !subjects.contains(where: { Self.matches($0, violation) }) {
                unexpected.append((result.name, violation))
            }
        }
        return Outcome(items: items, unexpected: unexpected)
    }
}
