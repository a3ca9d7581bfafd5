import SyncProtocol

extension ScenarioAction {
    /// How a runner plays an action: a control command to a process (a pooled device is addressed by its id; the
    /// runner routes it through its pool), or a signal to a process.
    public enum Play: Sendable, Equatable {
        case control(target: String, command: String, args: [String: JSONValue])
        case signal(target: String, command: String)
        /// `partition` (two halves) or `heal`, carried out on the hosts' networks.
        case network(command: String, cut: NetworkCut)
    }

    /// What playing this action sends, and the fields its `scenario.action` event carries after `action`, `at` and
    /// `line` (an edit's `key` is added from the device's answer). `LabRun` and `SimRun` both play steps through it.
    public var play: (Play, fields: [(String, JSONValue)]) {
        switch self {
        case .edit(let device, let draft, let action, let title, let body):
            var args: [String: JSONValue] = ["draft": .string(draft), "action": .string(action.rawValue)]
            if let title { args["title"] = .string(title) }
            if let body { args["body"] = .string(body) }
            // What the user asked the edit to write: the intent check replays it (InvariantChecks+Order.swift).
            var fields: [(String, JSONValue)] = [("target", .string(device)), ("draft", .string(draft)),
                                                 ("op", .string(action.rawValue))]
            if let title { fields.append(("title", .string(title))) }
            if let body { fields.append(("body", .string(body))) }
            return (.control(target: device, command: "edit", args: args), fields)
        case .device(let device, let command):
            return (.control(target: device, command: command, args: [:]), [("target", .string(device))])
        case .engagement(let device, let opens):
            return (.control(target: device, command: "engagement", args: ["opensPerDay": .double(opens)]),
                    [("target", .string(device))])
        case .refresh(let device, let on):
            return (.control(target: device, command: "refresh", args: ["on": .bool(on)]),
                    [("target", .string(device))])
        case .chaos(let args):
            return (.control(target: "broker", command: "chaos", args: args), [("target", "broker")])
        case .faults(let args):
            return (.control(target: "server", command: "faults", args: args), [("target", "server")])
        case .signal(let target, let command):
            return (.signal(target: target, command: command), [("target", .string(target))])
        case .crash(let target, let point, let nth):
            return (.control(target: target, command: "crashAt", args: ["point": .string(point), "nth": .int(nth)]),
                    [("target", .string(target)), ("point", .string(point)), ("nth", .int(nth))])
        case .network(let command, let cut):
            return (.network(command: command, cut: cut),
                    cut.halves.isEmpty ? [] : [("halves", .array(cut.halves.map { .array($0.map { .string($0) }) }))])
        }
    }
}

extension ScenarioStep {
    /// What playing this step sends, and every field of its `scenario.action` event but an edit's `key`: the action,
    /// when and from which line, the nemesis that made it, then the action's own.
    public var play: (ScenarioAction.Play, fields: [(String, JSONValue)]) {
        var fields: [(String, JSONValue)] = [("action", .string(action.name)), ("at", .double(at)),
            ("line", .int(line))]
        if let nemesis { fields.append(("nemesis", .string(nemesis))) }
        let (play, own) = action.play
        return (play, fields + own)
    }
}
