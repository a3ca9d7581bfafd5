/// A mistake in a topology file: the file, the line, the key and what was expected. Nothing is started.
public struct TopologyError: Error, Sendable, CustomStringConvertible, Equatable {
    public let file: String
    public let line: Int
    public let key: String
    public let message: String

    public var description: String {
        key.isEmpty ? "\(file):\(line): \(message)" : "\(file):\(line): \(key): \(message)"
    }
}

/// Walks a JSON5 tree, reading typed values and recording which keys were read so unknown ones can be refused.
struct NodeReader {
    let file: String
    let node: JSON5Node
    let path: String

    func fail(_ message: String, at node: JSON5Node? = nil, key: String? = nil) -> TopologyError {
        TopologyError(file: file, line: (node ?? self.node).line, key: key ?? path, message: message)
    }

    func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Refuses keys outside `allowed`, suggesting the nearest allowed one.
    func onlyKeys(_ allowed: [String]) throws(TopologyError) {
        guard case .object(let pairs) = node.value else { throw fail("expected an object, got \(node.typeName)") }
        for pair in pairs where !allowed.contains(pair.key) {
            let hint = allowed.min(by: { editDistance($0, pair.key) < editDistance($1, pair.key) })
                .flatMap { editDistance($0, pair.key) <= 3 ? " (did you mean \"\($0)\"?)" : nil } ?? ""
            throw fail("unknown key\(hint); allowed here: \(allowed.joined(separator: ", "))", at: pair.node,
                       key: child(pair.key))
        }
    }

    func object(_ key: String) throws(TopologyError) -> NodeReader? {
        guard let value = node[key] else { return nil }
        guard case .object = value.value else {
            throw fail("expected an object, got \(value.typeName)", at: value, key: child(key))
        }
        return NodeReader(file: file, node: value, path: child(key))
    }

    func array(_ key: String) throws(TopologyError) -> [NodeReader]? {
        guard let value = node[key] else { return nil }
        guard case .array(let items) = value.value else {
            throw fail("expected an array, got \(value.typeName)", at: value, key: child(key))
        }
        return items.enumerated().map { NodeReader(file: file, node: $1, path: "\(child(key))[\($0)]") }
    }

    func string(_ key: String) throws(TopologyError) -> String? {
        guard let value = node[key] else { return nil }
        guard case .string(let s) = value.value else {
            throw fail("expected a string, got \(value.typeName)", at: value, key: child(key))
        }
        return s
    }

    /// A list of non-empty strings (e.g. account ids).
    func stringList(_ key: String) throws(TopologyError) -> [String]? {
        guard let items = try array(key) else { return nil }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item.node.value, !s.isEmpty else {
                throw item.fail("expected a non-empty string, got \(item.node.typeName)")
            }
            out.append(s)
        }
        return out
    }

    func requiredString(_ key: String) throws(TopologyError) -> String {
        guard let s = try string(key) else { throw fail("missing required key \"\(key)\"") }
        guard !s.isEmpty else { throw fail("must not be empty", at: node[key], key: child(key)) }
        return s
    }

    func oneOf(_ key: String, _ allowed: [String], default def: String? = nil) throws(TopologyError) -> String? {
        guard let s = try string(key) else { return def }
        guard allowed.contains(s) else {
            throw fail("expected one of \(allowed.joined(separator: ", ")); got \"\(s)\"", at: node[key],
                key: child(key))
        }
        return s
    }

    func number(_ key: String, in range: ClosedRange<Double>? = nil) throws(TopologyError) -> Double? {
        guard let value = node[key] else { return nil }
        guard case .number(let d) = value.value else {
            throw fail("expected a number, got \(value.typeName)", at: value, key: child(key))
        }
        if let range, !range.contains(d) {
            throw fail("must be between \(format(range.lowerBound)) and \(format(range.upperBound)); got \(format(d))",
                       at: value, key: child(key))
        }
        return d
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(TopologyError) -> Int? {
        guard let d = try number(key) else { return nil }
        guard d == d.rounded() else { throw fail("expected a whole number; got \(d)", at: node[key], key: child(key)) }
        guard d >= Double(range.lowerBound) && d <= Double(range.upperBound) else {
            throw fail("must be between \(range.lowerBound) and \(range.upperBound); got \(format(d))", at: node[key],
                       key: child(key))
        }
        return Int(d)
    }

    func bool(_ key: String) throws(TopologyError) -> Bool? {
        guard let value = node[key] else { return nil }
        guard case .bool(let b) = value.value else {
            throw fail("expected true or false, got \(value.typeName)", at: value, key: child(key))
        }
        return b
    }

    /// A duration in simulated seconds: a number of seconds, or a string like "90s", "15m", "2h", "7d".
    func duration(_ key: String) throws(TopologyError) -> Double? {
        guard let value = node[key] else { return nil }
        switch value.value {
        case .number(let d):
            guard d >= 0 else { throw fail("must not be negative; got \(format(d))", at: value, key: child(key)) }
            return d
        case .string(let s):
            guard let d = parseDuration(s) else {
                throw fail("expected a duration like \"90s\", \"15m\", \"2h\", \"7d\" or a number of seconds; got "
                    + "\"\(s)\"",
                           at: value, key: child(key))
            }
            return d
        default:
            throw fail("expected a duration (\"15m\") or seconds, got \(value.typeName)", at: value, key: child(key))
        }
    }
}

/// "90s", "15m", "1.5h", "7d", "250ms", "1h30m" → simulated seconds; a bare number is seconds.
func parseDuration(_ text: String) -> Double? {
    let trimmed = text.trimmingSpaces()
    if let d = Double(trimmed) { return d >= 0 && d.isFinite ? d : nil }
    let factors: [String: Double] = ["ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400]
    var total = 0.0
    var rest = Substring(trimmed)
    guard !rest.isEmpty else { return nil }
    while !rest.isEmpty {
        let number = rest.prefix(while: { $0.isNumber || $0 == "." })
        rest = rest.dropFirst(number.count)
        let unit = rest.prefix(while: { $0.isLetter })
        rest = rest.dropFirst(unit.count)
        guard let value = Double(number), let factor = factors[String(unit)] else { return nil }
        total += value * factor
    }
    return total
}

func format(_ d: Double) -> String {
    d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

extension String {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
