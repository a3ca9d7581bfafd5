import Foundation

/// The page's first words: the verdict, and beside "expectation met" which checks failed on which devices or
/// accounts, so a lesson's green "pass" never hides what its broken half broke.
extension Report {
    /// Every failed check, invariants and product checks alike, with the devices (or accounts) it failed on.
    var failedChecks: [(result: InvariantResult, subjects: [String])] {
        (invariants + checks).filter { !$0.held }.map { result in
            var subjects: [String] = []
            for violation in result.violations {
                guard let subject = violation.device ?? violation.account, !subjects.contains(subject) else { continue }
                subjects.append(subject)
            }
            return (result, subjects)
        }
    }

    /// "data-age-at-open on killed", "convergence on t-reader, t-writer".
    static func failedWords(_ failed: [(result: InvariantResult, subjects: [String])]) -> String {
        failed.map { item in
            let on = item.subjects.isEmpty ? "" : " on " + item.subjects.prefix(6).joined(separator: ", ")
                + (item.subjects.count > 6 ? " and \(item.subjects.count - 6) more" : "")
            return "**\(item.result.name)**\(on)"
        }.joined(separator: "; ")
    }

    /// The headline paragraph of report.md and report.html, nil for a run that failed nothing and expected nothing.
    var headline: String? {
        let failed = failedChecks
        let holding = data.devices.map(\.id).filter { id in
            !failed.contains { $0.subjects.contains(id) }
                && !failed.contains { item in
                    item.subjects.contains(data.devices.first { $0.id == id }?.account ?? "")
                }
        }
        let held = holding.isEmpty ? "" : " Every check held on " + holding.prefix(12).joined(separator: ", ")
            + (holding.count > 12 ? " and \(holding.count - 12) more" : "") + "."
        if let expectation {
            if expectation.met {
                return "**Expectation met**: the checks the topology predicts failed, where it said: "
                    + Self.failedWords(failed) + "." + held
            }
            let problems = expectation.problems.prefix(5).joined(separator: "; ")
            let failedText = failed.isEmpty ? "" : " Failed: " + Self.failedWords(failed) + "."
            return "**Expectation NOT met**: \(problems).\(failedText)"
        }
        guard !failed.isEmpty else { return nil }
        return "Failed: " + Self.failedWords(failed) + "." + held
    }
}
