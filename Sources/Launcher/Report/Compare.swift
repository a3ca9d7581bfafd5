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

    init(nameA: String, a: JSONValue, nameB: String, b: JSONValue) {
        self.nameA = nameA
        self.nameB = nameB
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
                if path == "invariants" {
                    for item in array {
                        let name = item["name"]?.stringValue ?? "?"
                        out.append(("invariant \(name)", item["held"] ?? .null))
                        out.append(("invariant \(name) detail", item["detail"] ?? .null))
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
            } else {
                out.append((path, v))
            }
        }
        walk(value, "")
        // The verdict first, then the invariants, then the figures in report.json's order.
        let verdict = out.filter { $0.0 == "verdict" }
        let invariants = out.filter { $0.0.hasPrefix("invariant ") }
        let rest = out.filter { $0.0 != "verdict" && !$0.0.hasPrefix("invariant ") }
        return verdict + invariants + rest
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

    var html: String {
        var s = """
            <!doctype html><html><head><meta charset="utf-8"><title>SyncLab: \(xmlEscape(nameA)) vs \(xmlEscape(nameB))</title>
            <style>body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
            table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;font-size:13px}
            th{background:#f3f3f3}tr.changed td{background:#fff9db}td.bad{color:#c92a2a;font-weight:600}
            td.good{color:#1a7f37}</style></head><body>
            <h1>Two runs side by side</h1>
            <p>A: <code>\(xmlEscape(nameA))</code><br>B: <code>\(xmlEscape(nameB))</code><br>Rows that differ are yellow.</p>
            <table><tr><th>figure</th><th>A</th><th>B</th><th>B − A</th></tr>

            """
        for row in rows {
            func cls(_ v: String) -> String {
                v == "FAILED" || v == "fail" ? " class=\"bad\"" : (v == "held" || v == "pass" ? " class=\"good\"" : "")
            }
            s +=
                "<tr\(row.changed && !row.difference.isEmpty ? " class=\"changed\"" : "")><td>\(xmlEscape(row.name))</td>"
            s += "<td\(cls(row.a))>\(xmlEscape(row.a))</td><td\(cls(row.b))>\(xmlEscape(row.b))</td>"
            s += "<td>\(xmlEscape(row.difference))</td></tr>\n"
        }
        return s + "</table></body></html>\n"
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
