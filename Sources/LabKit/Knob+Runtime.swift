import SyncProtocol

/// The runtime subset of a settings table: the knobs a control command changes while the process runs. The control
/// command's arguments, a scenario step's keys, a nemesis window's settings, the `fault.set` event's fields and the
/// timeline's fault labels are all these knobs, by their topology keys, in table order: a new runtime fault is one
/// more entry marked `.atRuntime`, like any setting.
extension Knob {
    /// The knob, also changed at run time. A runtime knob needs a topology key (its argument's name) and must write
    /// into the part of the settings the role's instance keeps at run time (the server's `faults`, the broker's
    /// `chaos`): `RuntimeKnobTests` round-trips every one through its control command.
    public var atRuntime: Knob {
        precondition(key != nil, "a runtime knob needs a topology key: --\(flag)")
        var knob = self
        knob.runtime = true
        return knob
    }

    /// A value as a control argument and an event field: a number, a boolean or a string.
    public func json(_ text: String) -> JSONValue {
        switch values {
        case .integer: return .int(Int(text)!)
        case .number, .duration: return .double(Double(text)!)
        case .bool: return .bool(text == "true")
        case .choice, .accounts: return .string(text)
        }
    }

    /// The text of a control argument or an event field; nil when it is not of the knob's kind.
    public func text(of value: JSONValue) -> String? {
        switch values {
        case .integer, .number, .duration:
            guard let number = value.doubleValue, number.isFinite else { return nil }
            return number.flagText
        case .bool: return value.boolValue.map { $0 ? "true" : "false" }
        case .choice, .accounts: return value.stringValue
        }
    }
}

extension KnobSettings {
    /// The knobs a control command may change while the process runs, in table order.
    public static var runtimeKnobs: [Knob<Self>] { knobs.filter(\.runtime) }

    /// Their topology keys: the control command's arguments and the scenario step's keys.
    public static var runtimeKeys: [String] { runtimeKnobs.map { $0.key! } }

    /// The runtime knobs' values, as the control command's reply and the `fault.set` event carry them.
    public var runtimeFields: [(String, JSONValue)] {
        Self.runtimeKnobs.map { ($0.key!, $0.json($0.text(in: self))) }
    }

    /// Fails on an argument that is neither a runtime knob nor one of `others` (`off`, `device`).
    public static func checkRuntimeNames(_ args: [String: JSONValue], others: [String]) throws(KnobError) {
        let known = runtimeKeys + others
        for name in args.keys.sorted() where !known.contains(name) {
            throw KnobError(problem: "is unknown: use \(known.joined(separator: ", "))", key: name)
        }
    }

    /// Sets every runtime knob `args` names, each checked by its knob (the same range as its flag and its topology
    /// key); other names are ignored. On an error nothing is changed.
    public mutating func applyRuntime(_ args: [String: JSONValue]) throws(KnobError) {
        var next = self
        for knob in Self.runtimeKnobs {
            guard let key = knob.key, let value = args[key] else { continue }
            guard let text = knob.text(of: value) else {
                throw KnobError(problem: "must be \(knob.kindWord), got \(value)", key: key)
            }
            do {
                try knob.apply(text, to: &next)
            } catch {
                throw KnobError(problem: error.problem, key: key)
            }
        }
        self = next
    }

    /// `key value` for each runtime knob whose value in `fields` (event fields, control data) is not its default,
    /// in table order: the timeline's fault labels.
    public static func runtimeLabels(_ fields: (String) -> JSONValue?) -> [String] {
        runtimeKnobs.compactMap { knob in
            guard let key = knob.key, let value = fields(key), let text = knob.text(of: value),
                  text != knob.defaultText else { return nil }
            return "\(key) \(text)"
        }
    }

    /// `key value` for each runtime knob whose value here is not its default.
    public var runtimeLabels: [String] {
        let fields = Dictionary(runtimeFields, uniquingKeysWith: { first, _ in first })
        return Self.runtimeLabels { fields[$0] }
    }
}

extension Knob {
    /// What a control argument of this knob must be.
    var kindWord: String {
        switch values {
        case .integer, .number, .duration: return "a number"
        case .bool: return "true or false"
        case .choice(let allowed): return "one of \(allowed.joined(separator: "|"))"
        case .accounts: return "a list of account ids"
        }
    }
}
