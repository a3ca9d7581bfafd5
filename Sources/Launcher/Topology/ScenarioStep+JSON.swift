import SyncProtocol

extension ScenarioStep {
    /// The step in the `scenario` syntax of a topology file (one JSON object; `at` in simulated seconds).
    var json: JSONValue {
        var fields: [(String, JSONValue)] = [("at", .double((at * 1000).rounded() / 1000)),
                                             ("action", .string(action.name))]
        switch action {
        case .edit(let device, let draft, let op, let title, let body):
            fields += [("device", .string(device)), ("draft", .string(draft)), ("op", .string(op.rawValue))]
            if let title { fields.append(("title", .string(title))) }
            if let body { fields.append(("body", .string(body))) }
        case .device(let device, _), .engagement(let device, _), .refresh(let device, _):
            fields.append(("device", .string(device)))
            if case .engagement(_, let opens) = action { fields.append(("opensPerDay", .double(opens))) }
            if case .refresh(_, let on) = action { fields.append(("on", .bool(on))) }
        case .signal(let target, _):
            fields.append(("target", .string(target)))
        case .crash(let target, let point, let nth):
            fields += [("target", .string(target)), ("point", .string(point)), ("nth", .int(nth))]
        case .network(_, let cut):
            if !cut.halves.isEmpty {
                fields.append(("halves", .array(cut.halves.map { .array($0.map { .string($0) }) })))
            }
        case .chaos(let args), .faults(let args):
            fields += args.keys.sorted().map { ($0, args[$0]!) }
        }
        return .object(fields)
    }
}
