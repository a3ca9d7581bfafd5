import Foundation
import LabKit
import PushBroker
import SyncProtocol
import SyncServer

extension TimelineModel {
    /// Walks the events once, in order, keeping what is open (a state, an outage, a fault) until it closes.
    struct Builder {
        var model: TimelineModel
        let deviceByID: [String: DeviceInfo]
        let laneSet: Set<String>
        let aggregateOf: [String: String]
        let drawn: Set<String>
        let serverFlags: String?
        /// The lanes of the devices each pool hosts, sorted: found once, not by a walk over every device per event.
        let hostedLanes: [String: [String]]

        var appState: [String: (state: String, since: Double)] = [:]
        var offlineSince: [String: Double] = [:]
        var dozeSince: [String: Double] = [:]
        var chargingSince: [String: Double] = [:]
        var downSince: [String: Double] = [:]
        var pausedSince: [String: Double] = [:]
        var partitionSince: (since: Double, label: String)?
        /// Open fault per lane and scope: since, label.
        var faultOn: [String: (since: Double, label: String)] = [:]
        var phaseOpen: (name: String, since: Double)?
        var passOpen: [String: (start: Double, trigger: String)] = [:]
        var brokerIncarnation = 0
        /// Hints the broker accepted and has not settled yet (this incarnation), and when it was last killed.
        var heldHints: Set<String> = []
        var brokerKilledAt: Double?
        var serverStarts = 0
        /// Op key → where it was applied on the server (sim, seq, account).
        var applied: [String: (sim: Double, seq: Int, account: String)] = [:]
        /// "account/seq" → op key.
        var keyOfSeq: [String: String] = [:]
        /// "incarnation/hint" → (device, op keys it is about).
        var hintInfo: [String: (device: String, keys: [String], sim: Double)] = [:]
        /// device/hint → the incarnation id last delivered to it, to join the device's `hint.received`.
        var deliveredTo: [String: (id: String, sim: Double)] = [:]
        var savedAt: [String: (device: String, sim: Double, draft: String)] = [:]
        var heads: [String: Int] = [:]
        var headSteps: [String: [(sim: Double, value: Int)]] = [:]
        var cursorSteps: [String: [(sim: Double, value: Int)]] = [:]
        var aggregatePasses: [String: [Int]] = [:]
        var aggregateOffline: [String: [Int]] = [:]
        let bucketSec: Double

        init(
            model: TimelineModel, deviceByID: [String: DeviceInfo], laneSet: Set<String>,
            aggregateOf: [String: String], drawn: Set<String>, serverFlags: String?
        ) {
            self.model = model
            self.deviceByID = deviceByID
            self.laneSet = laneSet
            self.aggregateOf = aggregateOf
            self.drawn = drawn
            self.serverFlags = serverFlags
            var hosted: [String: [String]] = [:]
            for device in deviceByID.values where laneSet.contains(device.id) {
                hosted[device.host, default: []].append(device.id)
            }
            self.hostedLanes = hosted.mapValues { $0.sorted() }
            self.bucketSec = max(1, (model.end - model.start) / 120)
            for device in deviceByID.values where laneSet.contains(device.id) {
                appState[device.id] = (device.start, model.start)
                if device.charging { chargingSince[device.id] = model.start }
            }
            if let flags = serverFlags { faultOn["server/flags"] = (model.start, flags) }
        }

        private func clamp(_ sim: Double) -> Double { max(model.start, sim) }

        private mutating func band(_ lane: String?, _ kind: BandKind, _ from: Double, _ to: Double, _ label: String) {
            let a = clamp(from)
            let b = clamp(to)
            guard b > a || (b == a && kind == .down) else { return }
            model.bands.append(Band(lane: lane, kind: kind, start: a, end: b, label: label))
        }

        private mutating func mark(
            _ lane: String, _ sim: Double, _ kind: MarkKind, _ label: String, _ keys: [String],
            reason: String? = nil
        ) {
            guard laneSet.contains(lane), sim >= model.start else { return }
            model.marks.append(Mark(lane: lane, sim: sim, kind: kind, label: label, keys: keys, reason: reason))
        }

        private mutating func link(
            _ from: String, _ fromSim: Double, _ to: String, _ toSim: Double, _ kind: LinkKind,
            _ label: String, _ keys: [String]
        ) {
            guard laneSet.contains(from), laneSet.contains(to), toSim >= model.start else { return }
            model.links.append(Link(fromLane: from, fromSim: clamp(fromSim), toLane: to, toSim: toSim, kind: kind,
                                    label: label, keys: keys))
        }

        private var bucketCount: Int { Int(((model.end - model.start) / bucketSec).rounded(.up)) + 1 }

        private func bucket(_ sim: Double) -> Int { min(bucketCount - 1, max(0, Int((sim - model.start) / bucketSec))) }

        /// The process lane an event of the launcher about `target` belongs on: the target itself, or every lane
        /// of the devices a killed pool hosted.
        private func lanes(of target: String) -> [String] {
            if laneSet.contains(target) { return [target] }
            return hostedLanes[target] ?? []
        }

        mutating func add(_ e: Event) {
            if e.proc == "launcher" {
                launcher(e)
                return
            }
            if e.proc == "server" {
                server(e)
                return
            }
            if e.proc == "broker" {
                broker(e)
                return
            }
            guard deviceByID[e.proc] != nil else { return }
            if let aggregate = aggregateOf[e.proc] {
                switch e.type {
                case EventCatalogue.passStart where e.sim >= model.start:
                    let (count, index) = (bucketCount, bucket(e.sim))
                    aggregatePasses[aggregate, default: Array(repeating: 0, count: count)][index] += 1
                case EventCatalogue.netOffline where e.sim >= model.start:
                    let (count, index) = (bucketCount, bucket(e.sim))
                    aggregateOffline[aggregate, default: Array(repeating: 0, count: count)][index] += 1
                default: break
                }
                return
            }
            device(e)
        }

        private mutating func launcher(_ e: Event) {
            switch e.type {
            case EventCatalogue.phase:
                let name = e.string("name") ?? "?"
                if name == "scenario", e.sim > model.start {
                    band(
                        nil, .startup, model.start, e.sim,
                        "start-up: the processes were still starting after simulated 0")
                }
                if let open = phaseOpen, ["heal", "quiesce"].contains(open.name) {
                    band(nil, open.name == "heal" ? .heal : .quiesce, open.since, e.sim, open.name)
                }
                phaseOpen = (name, e.sim)
            case EventCatalogue.processKilled:
                if e.string("target") == TimelineModel.brokerLane { brokerKilledAt = e.sim }
                for lane in lanes(of: e.string("target") ?? "") where downSince[lane] == nil { downSince[lane] = e.sim }
                // A paused process that is killed is no longer paused: it is down.
                for lane in lanes(of: e.string("target") ?? "") {
                    if let since = pausedSince.removeValue(forKey: lane) {
                        band(lane, .paused, since, e.sim, "paused (SIGSTOP), then killed")
                    }
                }
            case EventCatalogue.processRestarted:
                for lane in lanes(of: e.string("target") ?? "") {
                    if let since = downSince.removeValue(forKey: lane) {
                        band(lane, .down, since, e.sim, "down (killed, restarted at \(formatSim(e.sim)))")
                    }
                }
            case EventCatalogue.processPaused:
                for lane in lanes(of: e.string("target") ?? "") where pausedSince[lane] == nil {
                    pausedSince[lane] = e.sim
                }
            case EventCatalogue.processResumed:
                for lane in lanes(of: e.string("target") ?? "") {
                    if let since = pausedSince.removeValue(forKey: lane) {
                        band(lane, .paused, since, e.sim, "paused (SIGSTOP)")
                    }
                }
            case EventCatalogue.networkPartitioned where partitionSince == nil:
                let hosts = (e["hosts"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).compactMap(\.stringValue) }
                let label = hosts.map { $0.joined(separator: ",") }.joined(separator: " | ")
                partitionSince = (e.sim, "partition " + label)
            case EventCatalogue.networkHealed:
                if let open = partitionSince { band(nil, .partition, open.since, e.sim, open.label + ", then healed") }
                partitionSince = nil
            case EventCatalogue.scenarioAction:
                let target = e.string("target") ?? ""
                let action = e.string("action") ?? "?"
                let lane = laneSet.contains(target) ? target : (lanes(of: target).first ?? "")
                var label = "\(formatSim(e.sim)) \(action) \(target)"
                if let draft = e.string("draft") { label += " \(draft)" }
                mark(lane, e.sim, .step, label, [target] + (e.string("draft").map { [$0] } ?? []))
            default:
                break
            }
        }

        private mutating func server(_ e: Event) {
            switch e.type {
            case EventCatalogue.processStarted:
                serverStarts += 1
                if serverStarts > 1 {
                    closeFaults(prefix: "server/", at: e.sim)
                    if let flags = serverFlags { faultOn["server/flags"] = (e.sim, flags) }
                }
            case EventCatalogue.faultSet:
                closeFaults(prefix: "server/", at: e.sim)
                let parts = ServerSettings.runtimeLabels { e[$0] }
                if !parts.isEmpty { faultOn["server/control"] = (e.sim, "faults: " + parts.joined(separator: ", ")) }
            case EventCatalogue.opApplied:
                guard let key = e.string("key"), let seq = e.int("seq") else { return }
                let account = e.string("account") ?? ""
                applied[key] = (e.sim, seq, account)
                keyOfSeq["\(account)/\(seq)"] = key
                if seq > heads[account, default: 0] {
                    heads[account] = seq
                    headSteps[account, default: []].append((e.sim, seq))
                }
                let origin = e.string("device") ?? savedAt[key]?.device ?? ""
                guard drawn.contains(key) else { return }
                mark(TimelineModel.serverLane, e.sim, .applied, "\(key) applied as seq \(seq)", [key, origin])
            case EventCatalogue.opDuplicate:
                guard let key = e.string("key"), drawn.contains(key) else { return }
                mark(
                    TimelineModel.serverLane, e.sim, .hintDuplicated, "\(key) replayed: answered as a duplicate", [key])
            default:
                break
            }
        }

        private mutating func closeFaults(prefix: String, at sim: Double) {
            for (scope, open) in faultOn where scope.hasPrefix(prefix) {
                let lane = prefix == "server/" ? TimelineModel.serverLane : TimelineModel.brokerLane
                band(lane, .fault, open.since, sim, open.label)
                faultOn[scope] = nil
            }
        }

        private mutating func broker(_ e: Event) {
            switch e.type {
            case EventCatalogue.processStarted:
                // The hints a killed broker still held died with it, where it was killed.
                for id in heldHints.sorted() {
                    guard let info = hintInfo[id], laneSet.contains(info.device) else { continue }
                    let hint = String(id.split(separator: "/").last ?? "")
                    let at = brokerKilledAt ?? e.sim
                    mark(
                        TimelineModel.brokerLane, at, .hintDied, "hint \(hint) to \(info.device) lost with the broker",
                        info.keys + [hint, info.device], reason: "lost with the broker")
                    for key in info.keys where drawn.contains(key)
                        && !(appliedOn[key]?.contains(info.device) ?? false) {
                        unrepaired["\(info.device)/\(key)"] = (TimelineModel.brokerLane, at, hint)
                    }
                }
                heldHints = []
                brokerKilledAt = nil
                brokerIncarnation += 1
                closeFaults(prefix: "broker/", at: e.sim)
                return
            case EventCatalogue.faultSet:
                let scope = e.string("scope") ?? "global"
                let device = e.string("device")
                if e["off"]?.boolValue == true {
                    if scope == "all" {
                        closeFaults(prefix: "broker/", at: e.sim)
                    } else if let device, let open = faultOn.removeValue(forKey: "broker/\(device)") {
                        band(TimelineModel.brokerLane, .fault, open.since, e.sim, open.label)
                    }
                    return
                }
                let key = "broker/\(device ?? "global")"
                if let open = faultOn.removeValue(forKey: key) {
                    band(TimelineModel.brokerLane, .fault, open.since, e.sim, open.label)
                }
                let parts = BrokerSettings.runtimeLabels { e[$0] }
                if !parts.isEmpty {
                    faultOn[key] = (e.sim, "chaos\(device.map { " on \($0)" } ?? ""): " + parts.joined(separator: ", "))
                }
                return
            default:
                break
            }
            guard e.type.hasPrefix("hint."), let hint = e.string("hint") else { return }
            let id = "\(brokerIncarnation)/\(hint)"
            switch e.type {
            case EventCatalogue.hintAccepted:
                let device = e.string("device") ?? ""
                let account = e.string("account") ?? ""
                let keys = (e["seqs"]?.arrayValue ?? []).compactMap { $0.intValue }.compactMap {
                    keyOfSeq["\(account)/\($0)"]
                }
                hintInfo[id] = (device, keys, e.sim)
                heldHints.insert(id)
                guard laneSet.contains(device), keys.contains(where: drawn.contains) else { return }
                // The notice: the server's apply of the newest edit the hint is about → the broker's accept.
                if let key = keys.last, let at = applied[key] {
                    link(
                        TimelineModel.serverLane, at.sim, TimelineModel.brokerLane, e.sim, .notice,
                        "notice: head \(e.int("head") ?? 0) of \(account)", keys + [hint])
                }
            case EventCatalogue.hintDelivered:
                heldHints.remove(id)
                guard let info = hintInfo[id] else { return }
                deliveredTo["\(info.device)/\(hint)"] = (id, e.sim)
            case EventCatalogue.hintDuplicated:
                guard let info = hintInfo[id], laneSet.contains(info.device) else { return }
                mark(
                    TimelineModel.brokerLane, e.sim, .hintDuplicated, "hint \(hint) to \(info.device) duplicated",
                    info.keys + [hint, info.device])
                deliveredTo["\(info.device)/\(hint)"] = (id, e.sim)
            case let type where HintAccounting.fates.contains(type) && type != EventCatalogue.hintDelivered.name:
                heldHints.remove(id)
                guard let info = hintInfo[id], laneSet.contains(info.device) else { return }
                let fate = String(type.dropFirst(5))
                let reason = e.string("reason")
                mark(
                    TimelineModel.brokerLane, e.sim, .hintDied,
                    "hint \(hint) to \(info.device) \(fate)" + (reason.map { ": \($0)" } ?? ""),
                    info.keys + [hint, info.device], reason: reason ?? fate)
                for key in info.keys where drawn.contains(key) && !(appliedOn[key]?.contains(info.device) ?? false) {
                    unrepaired["\(info.device)/\(key)"] = (TimelineModel.brokerLane, e.sim, hint)
                }
            default:
                break
            }
        }

        private mutating func device(_ e: Event) {
            let lane = e.proc
            switch e.type {
            case EventCatalogue.appForeground, EventCatalogue.appBackground, EventCatalogue.appClosed,
                EventCatalogue.appForceQuit:
                let state = String(e.type.dropFirst(4))
                if let open = appState[lane] { appBand(lane, open.state, open.since, e.sim) }
                appState[lane] = (state, e.sim)
            case EventCatalogue.netOffline:
                if offlineSince[lane] == nil { offlineSince[lane] = e.sim }
            case EventCatalogue.netOnline:
                if let since = offlineSince.removeValue(forKey: lane) { band(lane, .offline, since, e.sim, "offline") }
            case EventCatalogue.powerPlugged:
                if chargingSince[lane] == nil { chargingSince[lane] = e.sim }
            case EventCatalogue.powerUnplugged:
                if let since = chargingSince.removeValue(forKey: lane) {
                    band(lane, .charging, since, e.sim, "charging")
                }
            case EventCatalogue.dozeEnter:
                if dozeSince[lane] == nil { dozeSince[lane] = e.sim }
            case EventCatalogue.dozeExit:
                if let since = dozeSince.removeValue(forKey: lane) { band(lane, .doze, since, e.sim, "doze") }
            case EventCatalogue.windowGranted:
                let until = e["untilSim"]?.doubleValue ?? e.sim
                band(lane, .window, e.sim, until, "iOS background window granted (\(formatSim(until - e.sim)))")
            case EventCatalogue.dozeMaintenance:
                let until = e["untilSim"]?.doubleValue ?? e.sim
                band(lane, .window, e.sim, until, "doze maintenance window")
            case EventCatalogue.processStarted:
                if let since = downSince.removeValue(forKey: lane) {
                    band(lane, .down, since, e.sim, "down (killed, started again)")
                }
            case EventCatalogue.passStart:
                passOpen[lane] = (e.sim, e.string("trigger") ?? "?")
            case EventCatalogue.passEnd, EventCatalogue.passKilled:
                let open = passOpen.removeValue(forKey: lane) ?? (e.sim, e.string("trigger") ?? "?")
                guard e.sim >= model.start else { return }
                model.passes.append(
                    Pass(
                        lane: lane, start: clamp(open.start), end: e.sim, trigger: open.trigger,
                        cutOff: e.type == EventCatalogue.passKilled.name || e["cutOff"]?.boolValue == true))
            case EventCatalogue.opSaved:
                guard let key = e.string("key") else { return }
                let draft = e.string("draft") ?? "?"
                savedAt[key] = (lane, e.sim, draft)
                guard drawn.contains(key) else { return }
                mark(
                    lane, e.sim, .saved, "\(key) saved (\(e.string("action") ?? "edit") \(draft))", [key, draft, lane])
            case EventCatalogue.opSent:
                guard let key = e.string("key") else { return }
                sentAt[key] = e.sim
                guard drawn.contains(key) else { return }
                let attempt = e.int("attempt") ?? 1
                mark(lane, e.sim, .sent, "\(key) sent (attempt \(attempt))", [key])
            case EventCatalogue.opResult:
                guard let key = e.string("key"), drawn.contains(key) else { return }
                let reason = e.string("reason").map { ": \($0)" } ?? ""
                if e.string("outcome") == "unknown" {
                    mark(lane, e.sim, .unknownOutcome, "\(key) outcome unknown\(reason); resent with the same "
                        + "key", [key])
                } else if e.string("outcome") == "needsAttention" {
                    mark(lane, e.sim, .needsAttention, "\(key) needs "
                        + "attention\(reason)", [key], reason: e.string("reason"))
                }
                guard let at = applied[key],
                    e.string("outcome") == "acknowledged" || e.string("outcome") == "duplicate"
                else { return }
                if let saved = savedAt[key] {
                    link(
                        lane, max(saved.sim, lastSent(key) ?? saved.sim), TimelineModel.serverLane, at.sim, .send,
                        "\(key) sent → seq \(at.seq)", [key, saved.draft, lane])
                }
            case EventCatalogue.hintReceived:
                guard let hint = e.string("hint") else { return }
                let delivered = deliveredTo["\(lane)/\(hint)"]
                let keys = delivered.flatMap { hintInfo[$0.id]?.keys } ?? []
                guard keys.contains(where: drawn.contains) || drawn.isEmpty || keys.isEmpty else { return }
                mark(lane, e.sim, .hintReceived, "hint \(hint) received (head \(e.int("head") ?? 0))", keys + [hint])
                if let delivered {
                    link(TimelineModel.brokerLane, delivered.sim, lane, e.sim, .hint, "hint \(hint)", keys + [hint])
                }
            case EventCatalogue.hintIgnored:
                let hint = e.string("hint") ?? "?"
                let keys = deliveredTo["\(lane)/\(hint)"].flatMap { hintInfo[$0.id]?.keys } ?? []
                for key in keys where drawn.contains(key) && !(appliedOn[key]?.contains(lane) ?? false) {
                    unrepaired["\(lane)/\(key)"] = (lane, e.sim, hint)
                }
                mark(
                    lane, e.sim, .hintIgnored, "hint \(hint) ignored: \(e.string("reason") ?? "?")", keys + [hint],
                    reason: e.string("reason"))
            case EventCatalogue.changeApplied:
                guard let key = e.string("key") else { return }
                if let origin = savedAt[key], origin.device == lane { return }
                guard drawn.contains(key) else { return }
                let trigger = e.string("trigger") ?? "?"
                mark(lane, e.sim, .changeApplied, "\(key) applied here (pass by \(trigger))", [key])
                appliedOn[key, default: []].insert(lane)
                if let died = unrepaired.removeValue(forKey: "\(lane)/\(key)") {
                    link(
                        died.lane, died.sim, lane, e.sim, .repair,
                        "hint \(died.hint) was lost; \(key) reached \(lane) anyway, by a \(trigger) pass "
                            + "\(formatSim(e.sim - died.sim)) later", [key, died.hint])
                }
                if let at = applied[key] {
                    link(
                        TimelineModel.serverLane, at.sim, lane, e.sim, .pull, "\(key) pulled by a \(trigger) pass",
                        [key, savedAt[key]?.draft ?? ""])
                }
            case EventCatalogue.cursorMoved:
                guard let to = e.int("to") else { return }
                cursorSteps[lane, default: []].append((e.sim, to))
            default:
                break
            }
        }

        var sentAt: [String: Double] = [:]
        /// Devices each drawn edit has reached.
        var appliedOn: [String: Set<String>] = [:]
        /// "device/key" → where a hint about the edit died or was ignored before the edit reached the device.
        var unrepaired: [String: (lane: String, sim: Double, hint: String)] = [:]
        private func lastSent(_ key: String) -> Double? { sentAt[key] }

        private mutating func appBand(_ lane: String, _ state: String, _ from: Double, _ to: Double) {
            let kind: BandKind
            switch state {
            case "foreground": kind = .foreground
            case "background": kind = .background
            case "closed": kind = .closed
            case "forceQuit": kind = .forceQuit
            default: return
            }
            band(lane, kind, from, to, state == "forceQuit" ? "force-quit" : state)
        }

        mutating func finish() {
            let end = model.end
            for (lane, open) in appState { appBand(lane, open.state, open.since, end) }
            for (lane, since) in offlineSince { band(lane, .offline, since, end, "offline") }
            for (lane, since) in dozeSince { band(lane, .doze, since, end, "doze") }
            for (lane, since) in chargingSince { band(lane, .charging, since, end, "charging") }
            for (lane, since) in downSince { band(lane, .down, since, end, "down") }
            for (lane, since) in pausedSince { band(lane, .paused, since, end, "paused") }
            if let open = partitionSince { band(nil, .partition, open.since, end, open.label) }
            for scope in faultOn.keys.sorted() {
                let open = faultOn[scope]!
                band(
                    scope.hasPrefix("server/") ? TimelineModel.serverLane : TimelineModel.brokerLane, .fault,
                    open.since, end, open.label)
            }
            if let open = phaseOpen, ["heal", "quiesce"].contains(open.name) {
                band(nil, open.name == "heal" ? .heal : .quiesce, open.since, end, open.name)
            }
            for lane in model.lanes {
                guard case .device = lane.kind, let info = deviceByID[lane.id] else { continue }
                model.cursors.append(
                    CursorLine(
                        lane: lane.id, cursor: cursorSteps[lane.id] ?? [],
                        head: headSteps[info.account] ?? []))
            }
            for lane in model.lanes {
                guard case .aggregate = lane.kind else { continue }
                let count = bucketCount
                model.aggregates.append(
                    Aggregate(
                        lane: lane.id, bucketSec: bucketSec,
                        passes: aggregatePasses[lane.id] ?? Array(repeating: 0, count: count),
                        offline: aggregateOffline[lane.id] ?? Array(repeating: 0, count: count)))
            }
            model.bands.sort { ($0.lane ?? "", $0.start) < ($1.lane ?? "", $1.start) }
        }
    }
}
