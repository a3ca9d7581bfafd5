import LabKit
import SyncProtocol

extension Topology {
    /// The nemesis's faults and steps, drawn from the run's seed: each generator from a generator of its own
    /// (`nemesis/INDEX/KIND`), so adding one moves no other's draws; then, in time order, the limits drop the faults
    /// that would break them. Empty without a `nemesis` block.
    public func nemesisSchedule() -> NemesisSchedule {
        guard let nemesis else { return NemesisSchedule() }
        let until = min(nemesis.until ?? duration, duration)
        struct Candidate {
            var fault: NemesisSchedule.Fault
            var order: Int
            var line: Int
        }
        var candidates: [Candidate] = []
        for (index, g) in nemesis.generators.enumerated() {
            let targets = resolveNemesisTargets(g.targets, kind: g.kind)
            guard !targets.isEmpty, g.interval != nil || g.rate > 0 else { continue }
            var draw = SeededGenerator.derived(seed: seed, name: "nemesis/\(index)/\(g.kind.rawValue)")
            func gap() -> Double { g.interval ?? draw.exponential(mean: 3600 / g.rate) }
            var t = nemesis.from + gap()
            while t < until {
                let target = targets[Int(draw.next() % UInt64(targets.count))]
                let end = min(t + max(0.001, g.downtime.draw(&draw)), duration)
                var point: String?
                if g.kind == .crash {
                    let role = target == "server" || target == "broker" ? target : "device"
                    let listed = g.points.isEmpty ? CrashPoint.of(role: role).map(\.rawValue)
                        : g.points.filter { CrashPoint(rawValue: $0)?.role == role }
                    point = listed.isEmpty ? nil : listed[Int(draw.next() % UInt64(listed.count))]
                }
                if g.kind != .crash || point != nil {
                    candidates.append(Candidate(
                        fault: .init(kind: g.kind, target: target, start: t, end: end, point: point, generator: index),
                        order: candidates.count, line: g.line))
                }
                t += gap()
            }
        }
        candidates.sort { ($0.fault.start, $0.order) < ($1.fault.start, $1.order) }

        var schedule = NemesisSchedule()
        var active: [(fault: NemesisSchedule.Fault, holds: Set<String>)] = []
        let assignment = poolAssignment
        for candidate in candidates {
            let fault = candidate.fault
            active.removeAll { $0.fault.end < fault.start }
            let (holds, checks) = nemesisFootprint(fault, pools: assignment)
            let downNow = active.filter { !$0.fault.kind.isWindow }
            let process = assignment[fault.target] ?? fault.target
            var allowed = active.allSatisfy { $0.holds.isDisjoint(with: checks) }
            if !fault.kind.isWindow && downNow.count >= nemesis.maxDown { allowed = false }
            if !nemesis.serverWithBroker && !fault.kind.isWindow && !fault.kind.isDeviceState
                && (process == "server" || process == "broker")
            {
                let other = process == "server" ? "broker" : "server"
                if downNow.contains(where: { $0.fault.target == other && !$0.fault.kind.isDeviceState }) {
                    allowed = false
                }
            }
            guard allowed else {
                schedule.skipped += 1
                continue
            }
            active.append((fault, holds))
            schedule.faults.append(fault)
            let (start, end) = nemesisActions(fault)
            schedule.steps.append(ScenarioStep(at: fault.start, action: start, line: candidate.line,
                                               nemesis: fault.kind.rawValue))
            schedule.steps.append(ScenarioStep(at: fault.end, action: end, line: candidate.line,
                                               nemesis: fault.kind.rawValue + ".end"))
        }
        // Stable: at the same time an end comes before the start that follows it.
        schedule.steps = schedule.steps.enumerated().sorted {
            let a = $0.element, b = $1.element
            let aEnd = a.nemesis?.hasSuffix(".end") == true, bEnd = b.nemesis?.hasSuffix(".end") == true
            return (a.at, aEnd ? 0 : 1, $0.offset) < (b.at, bEnd ? 0 : 1, $1.offset)
        }.map(\.element)
        return schedule
    }

    /// What a fault holds while it lasts, and what it must not meet: a process fault holds its process and every
    /// device in it; a device-state fault holds its device and must not meet a fault of the device's process; a
    /// window holds its setting and its process (so its steps never find the process down).
    private func nemesisFootprint(_ fault: NemesisSchedule.Fault, pools: [String: String])
        -> (holds: Set<String>, checks: Set<String>)
    {
        let process = pools[fault.target] ?? fault.target
        let hosted = Set(pools.filter { $0.value == process }.map(\.key))
        if fault.kind.isDeviceState {
            return ([fault.target], [fault.target, process])
        }
        if fault.kind == .partition {
            // `heal` ends every partition at once: one partition at a time.
            return (["network"], ["network"])
        }
        if fault.kind.isWindow {
            let setting = "\(fault.kind.rawValue):\(fault.target)"
            return ([setting, process], [setting, process])
        }
        let holds = Set([process]).union(hosted)
        return (holds, holds)
    }

    /// The steps that start and end a fault.
    private func nemesisActions(_ fault: NemesisSchedule.Fault) -> (ScenarioAction, ScenarioAction) {
        let target = fault.target
        switch fault.kind {
        case .kill: return (.signal(target: target, command: "kill"), .signal(target: target, command: "restart"))
        case .pause: return (.signal(target: target, command: "pause"), .signal(target: target, command: "resume"))
        case .crash:
            return (.crash(target: target, point: fault.point ?? "", nth: 1),
                    .signal(target: target, command: "restart"))
        case .offline: return (.device(device: target, command: "offline"), .device(device: target, command: "online"))
        case .forceQuit:
            return (.device(device: target, command: "forceQuit"), .device(device: target, command: "open"))
        case .chaos:
            let settings = nemesis?.generators[fault.generator].settings ?? [:]
            if target == "broker" {
                // Back to the topology's chaos: every field of it, as the control command `chaos` takes them.
                return (.chaos(args: settings), .chaos(args: Dictionary(uniqueKeysWithValues: broker.runtimeFields)))
            }
            var own = settings
            own["device"] = .string(target)
            return (.chaos(args: own), .chaos(args: ["off": true, "device": .string(target)]))
        case .faults:
            let settings = nemesis?.generators[fault.generator].settings ?? [:]
            // Back to the topology's faults: every runtime knob of the server's table.
            return (.faults(args: settings), .faults(args: Dictionary(uniqueKeysWithValues: server.runtimeFields)))
        case .partition:
            return (.network(command: "partition", cut: NetworkCut(Self.halves(ofCut: target))),
                    .network(command: "heal", cut: NetworkCut([])))
        }
    }

    /// The targets a generator's names stand for, each once, in the order written: "any" (every target the kind
    /// can act on), "server", "broker", "devices", a platform, a device id or an account id.
    func resolveNemesisTargets(_ names: [String], kind: Nemesis.Kind) -> [String] {
        if kind == .partition { return partitionCuts(names, placement: placement) }
        var out: [String] = []
        func add(_ items: [String]) { for item in items where !out.contains(item) { out.append(item) } }
        let all = devices.map(\.id)
        for name in names {
            switch name {
            case "any":
                switch kind {
                case .kill, .pause, .crash: add(["server", "broker"] + all)
                case .offline, .forceQuit: add(all)
                case .chaos: add(["broker"])
                case .faults: add(["server"])
                case .partition: break
                }
            case "server", "broker": add([name])
            case "devices", "device": add(all)
            default:
                if let platform = Platform(rawValue: name) {
                    add(devices.filter { $0.platform == platform }.map(\.id))
                } else if all.contains(name) {
                    add([name])
                } else if let account = accounts.first(where: { $0.id == name }) {
                    add(account.devices.map(\.id))
                }
            }
        }
        return out
    }
}

extension Topology {
    /// `synclab run --nemesis kill,pause,…`: one generator with every default per kind, added to the topology's
    /// nemesis (created with the default limits when it has none).
    public mutating func addStandardNemesis(_ list: String) throws {
        var kinds: [Nemesis.Kind] = []
        for name in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let kind = Nemesis.Kind(rawValue: name) else {
                let known = Nemesis.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw LabError.usage("--nemesis: unknown kind \"\(name)\": use \(known)")
            }
            kinds.append(kind)
        }
        guard !kinds.isEmpty else { throw LabError.usage("--nemesis needs at least one kind, e.g. kill,pause,offline") }
        if kinds.contains(.partition), partitionCuts(["any"], placement: placement).isEmpty {
            throw LabError.usage("--nemesis partition needs processes on at least two hosts (a \"hosts\" block, "
                + "docs/HOSTS.md)")
        }
        var nemesis = self.nemesis ?? Nemesis()
        nemesis.generators += Nemesis.standard(kinds)
        self.nemesis = nemesis
    }
}
