import Foundation
import SyncProtocol

/// Two runs side by side: both verdicts, each invariant, and every figure of their report.json with the difference,
/// as a terminal table and as a page.
struct Compare {
    struct Row: Equatable {
        let name: String
        let a: String
        let b: String
        /// B − A for numbers ("+3", "−12.5 %"), "same" or "differs" for words, "" when one side lacks it.
        let difference: String
        var changed: Bool { difference != "same" && difference != "0" }
    }

    let nameA: String
    let nameB: String
    let rows: [Row]
    /// "real processes" or "simulation (virtual clock)", from each report.json's `simulated`.
    let kindA: String
    let kindB: String
    /// Each run's timeline section (report.html's), on one clock; empty when a folder's report cannot be made.
    var timelines: [String] = []

    init(nameA: String, a: JSONValue, nameB: String, b: JSONValue) {
        self.nameA = nameA
        self.nameB = nameB
        kindA = Self.kind(a)
        kindB = Self.kind(b)
        let fa = Self.flatten(a)
        let fb = Self.flatten(b)
        var names = fa.map(\.0)
        for (name, _) in fb where !names.contains(name) { names.append(name) }
        let da = Dictionary(fa, uniquingKeysWith: { x, _ in x })
        let db = Dictionary(fb, uniquingKeysWith: { x, _ in x })
        rows = names.map { name in
            let x = da[name]
            let y = db[name]
            return Row(
                name: name, a: x.map(Self.text) ?? "—", b: y.map(Self.text) ?? "—",
                difference: Self.difference(x, y))
        }
    }

    /// Every leaf of a report.json, named by its path; invariants by name, platforms by platform.
    static func flatten(_ value: JSONValue) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        func walk(_ v: JSONValue, _ path: String) {
            if let object = v.objectValue {
                for (key, child) in object { walk(child, path.isEmpty ? key : "\(path).\(key)") }
            } else if let array = v.arrayValue {
                if path == "invariants" || path == "checks" {
                    let word = path == "invariants" ? "invariant" : "check"
                    for item in array {
                        let name = item["name"]?.stringValue ?? "?"
                        out.append(("\(word) \(name)", item["held"] ?? .null))
                        out.append(("\(word) \(name) detail", item["detail"] ?? .null))
                    }
                } else if path == "expectation.expected" {
                    // Read the right way: `seen` is the expected failure seen, not a check that held.
                    for item in array {
                        let check = item["check"]?.stringValue ?? "?"
                        let subject = item["subject"]?.stringValue ?? "?"
                        let seen = item["seen"]?.boolValue == true
                        out.append(("expected: \(check) fails for \(subject)",
                                    .string(seen ? "failed, as expected" : "held: NOT as expected")))
                    }
                } else if path == "platforms" {
                    for item in array {
                        let platform = item["platform"]?.stringValue ?? "?"
                        for (key, child) in item.objectValue ?? [] where key != "platform" {
                            walk(child, "platforms.\(platform).\(key)")
                        }
                    }
                } else if array.allSatisfy({ $0.objectValue == nil && $0.arrayValue == nil }) {
                    out.append((path, .string(array.map(text).joined(separator: "; "))))
                } else {
                    for (index, item) in array.enumerated() { walk(item, "\(path)[\(index)]") }
                }
            } else if path == "expectation.met", let met = v.boolValue {
                out.append((path, .string(met ? "met" : "NOT met")))
            } else if path == "simulated" {
                out.append(("run", .string(kind(value))))
            } else {
                out.append((path, v))
            }
        }
        walk(value, "")
        // The verdict and the kind of run first, then the checks and the expectation, then the figures in
        // report.json's order.
        let verdict = out.filter { $0.0 == "verdict" || $0.0 == "run" }
        let checks = out.filter { isCheck($0.0) }
        let rest = out.filter { $0.0 != "verdict" && $0.0 != "run" && !isCheck($0.0) }
        return verdict + checks + rest
    }

    /// A row about a check or the expectation (listed first, and first among those that differ).
    static func isCheck(_ name: String) -> Bool {
        ["invariant ", "check ", "expected: ", "expectation."].contains { name.hasPrefix($0) }
    }

    static func kind(_ report: JSONValue) -> String {
        report["simulated"]?.boolValue == true ? "simulation (virtual clock)" : "real processes"
    }

    static func text(_ v: JSONValue) -> String {
        if let b = v.boolValue { return b ? "held" : "FAILED" }
        if let i = v.intValue, v.doubleValue == Double(i) { return String(i) }
        if let d = v.doubleValue { return format(d) }
        if let s = v.stringValue { return s }
        if case .null = v { return "—" }
        return v.description
    }

    static func difference(_ a: JSONValue?, _ b: JSONValue?) -> String {
        guard let a, let b else { return "" }
        if a.boolValue == nil, b.boolValue == nil, let x = a.doubleValue, let y = b.doubleValue {
            let d = y - x
            if d == 0 { return "0" }
            var s = (d > 0 ? "+" : "−") + format(abs((d * 1000).rounded() / 1000))
            if x != 0 { s += String(format: " (%@%.0f %%)", d > 0 ? "+" : "−", abs(d / x * 100)) }
            return s
        }
        return text(a) == text(b) ? "same" : "differs"
    }

    /// The terminal table: every row, the figures that changed marked with `*`.
    var table: String {
        let width = min(max(rows.map(\.name.count).max() ?? 10, 10), 44)
        let column = 26
        func cell(_ s: String, _ n: Int) -> String {
            let t = s.count > n ? String(s.prefix(n - 1)) + "…" : s
            return t.padding(toLength: n, withPad: " ", startingAt: 0)
        }
        var out =
            "  " + cell("", width) + "  " + cell("A: " + nameA, column) + "  " + cell("B: " + nameB, column)
            + "  B − A\n"
        for row in rows {
            out +=
                (row.changed && !row.difference.isEmpty ? "* " : "  ") + cell(row.name, width) + "  "
                + cell(row.a, column)
                + "  " + cell(row.b, column) + "  " + row.difference + "\n"
        }
        return out
    }

    /// A run folder's report.json, or the report made from its events and databases when it has none.
    static func reportJSON(folder: String) throws -> JSONValue {
        if let text = try? String(contentsOfFile: "\(folder)/report.json", encoding: .utf8),
            let value = try? JSONValue.parse(text)
        {
            return value
        }
        return try Report.make(folder: RunFolder(root: folder)).json
    }
}
