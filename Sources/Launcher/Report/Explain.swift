import Foundation
import LabKit

/// The whole story of one item of a run, from its events alone, in plain sentences with simulated time: an op
/// (by its idempotency key), a hint (by its id; a restarted broker numbers hints again, so one id may tell several
/// stories) or a draft (the stories of every op on it, merged).
struct Explain {
    enum Subject: Equatable {
        case op(String)
        case hint(String)
        case draft(String)
    }

    struct Line: Equatable {
        let sim: Double
        let text: String

        var rendered: String { "\(formatSim(sim).padding(toLength: 8, withPad: " ", startingAt: 0))  \(text)" }
    }

    let events: [Event]

    /// What `key` names in this run, or nil.
    func subject(of key: String) -> Subject? {
        if events.contains(where: { $0.type == EventCatalogue.opSaved && $0.string("key") == key }) { return .op(key) }
        if events.contains(where: { $0.proc == "broker" && $0.type.hasPrefix("hint.") && $0.string("hint") == key }) {
            return .hint(key)
        }
        if events.contains(where: {
            ($0.type == EventCatalogue.opSaved || $0.type == EventCatalogue.changeApplied) && $0.string("draft") == key
        }) {
            return .draft(key)
        }
        return nil
    }

    func story(_ subject: Subject) -> [Line] {
        switch subject {
        case .op(let key):
            return opStory([key], named: false)
        case .draft(let draft):
            let keys = events.filter { $0.type == EventCatalogue.opSaved && $0.string("draft") == draft }.compactMap {
                $0.string("key")
            }
            var lines = [
                Line(
                    sim: events.first { $0.type == EventCatalogue.opSaved && $0.string("draft") == draft }?.sim ?? 0,
                    text: "draft \(draft): \(keys.count) op(s) saved on it: \(keys.joined(separator: ", "))")
            ]
            lines += opStory(Set(keys), named: true)
            return lines
        case .hint(let hint):
            return hintStory(hint)
        }
    }

    /// The events of a set of ops, from the first save to the last device that applied them.
    private func opStory(_ keys: Set<String>, named: Bool) -> [Line] {
        var lines: [Line] = []
        var origin: [String: String] = [:]
        var seqs: [String: String] = [:]  // "account/seq" → key
        var incarnation = 0
        var ourHints: [String: String] = [:]  // "incarnation/hint" → key
        var deliveredTo: [String: String] = [:]  // "device/hint" → key
        var appliedOn: [String: Set<String>] = [:]
        var heldFor: [String: String] = [:]     // "incarnation/hint" → device, accepted and not yet settled
        var brokerKilled: Double?
        func it(_ key: String) -> String { named ? key : "it" }
        // What the devices really did, from their own events: a device that renews keys resends under a new one.
        var alias: [String: String] = [:]  // renewed key → the op's own key
        let renewing = Set(events.filter { $0.type == EventCatalogue.opKeyRenewed }.map(\.proc))
        var accountOf: [String: String] = [:]  // device → account, from the server's hellos
        var accountOfKey: [String: String] = [:]
        var appliedSeq: [String: Int] = [:]  // op key → its first seq
        var applies: [String: Int] = [:]
        var repeats: [String: Int] = [:]  // "device/event" → lines left out after the first
        // A switch that acts on every pass (a pull skipped, a lease stranded) is told once per device, then counted.
        func once(_ what: String, _ type: String, _ line: Line) {
            guard [EventCatalogue.passSkippedPull,
                EventCatalogue.leaseStranded].contains(where: { type == $0 }) else { return lines.append(line) }
            if repeats[what] == nil { lines.append(line); repeats[what] = 0 } else { repeats[what]! += 1 }
        }
        func keyIn(_ e: Event, _ field: String) -> String? {
            (e[field]?.arrayValue ?? []).compactMap(\.stringValue).map { alias[$0] ?? $0 }.first(where: keys.contains)
        }
        for e in events {
            if e.proc == "server", e.type == EventCatalogue.helloAccepted, let device = e.string("device") {
                accountOf[device] = e.string("account")
            }
            if e.proc == "launcher" && e.type == EventCatalogue.processKilled
                && e.string("target") == "broker" { brokerKilled = e.sim }
            if e.proc == "broker" && e.type == EventCatalogue.processStarted {
                for (id, device) in heldFor.sorted(by: { $0.key < $1.key }) {
                    let hint = id.split(separator: "/").last.map(String.init) ?? id
                    lines.append(Line(sim: brokerKilled ?? e.sim, text: "the broker was killed holding hint \(hint) "
                        + "for \(device): the hint died with it; \(device)'s cursor will bring the change"))
                }
                heldFor = [:]
                brokerKilled = nil
                incarnation += 1
            }
            let sentKey = e.string("key")
            let key = sentKey.map { alias[$0] ?? $0 }
            if let line = switchLine(e, keys: keys, it: it, keyIn: keyIn, origin: origin, accountOf: accountOf,
                                     accountOfKey: accountOfKey, appliedSeq: appliedSeq, appliedOn: appliedOn) {
                once("\(e.proc)/\(e.type)", e.type, line)
            }
            switch e.type {
            case EventCatalogue.opKeyRenewed where key.map(keys.contains) == true:
                guard let to = e.string("to") else { continue }
                alias[to] = key!
                lines.append(Line(sim: e.sim, text: "\(e.proc) gave \(it(key!)) a new idempotency key for attempt "
                    + "\(e.int("attempt") ?? 0), \(to) (switch keyPerAttempt): to the server the resend is a new "
                    + "intent"))
            case EventCatalogue.opSaved where key.map(keys.contains) == true:
                origin[key!] = e.proc
                accountOfKey[key!] = e.string("account") ?? accountOf[e.proc]
                lines.append(
                    Line(
                        sim: e.sim,
                        text: "\(e.proc) saved op \(key!) (\(e.string("action") ?? "edit") draft "
                            + "\(e.string("draft") ?? "?"))"))
            case EventCatalogue.opSent where key.map(keys.contains) == true:
                let attempt = e.int("attempt") ?? 1
                lines.append(
                    Line(
                        sim: e.sim,
                        text: "\(e.proc) sent \(it(key!))"
                            + (attempt > 1 && sentKey != key
                                ? " again under the new key \(sentKey!) (attempt \(attempt))"
                                : attempt > 1 ? " again with the same key (attempt \(attempt))" : "")
                            + (e.int("pass").map { " in pass \($0)" } ?? "")))
            case EventCatalogue.opResult where key.map(keys.contains) == true:
                let reason = e.string("reason").map { ": \($0)" } ?? ""
                let text: String
                switch e.string("outcome") ?? "?" {
                case "acknowledged":
                    text =
                        "got the server's acknowledgement for \(it(key!))" + (e.int("seq").map { " (seq \($0))" } ?? "")
                case "unknown":
                    text =
                        "got no answer for \(it(key!)) in time, outcome unknown\(reason); it stays "
                            + "confirmationDelayed and is resent "
                            + (renewing.contains(e.proc) ? "under a new key (switch keyPerAttempt)"
                                : "with the same key")
                case "retry": text = "was told to retry \(it(key!)) later\(reason)"
                case "needsAttention": text = "gave up on \(it(key!)): it needs attention\(reason)"
                case let other: text = "recorded outcome \(other) for \(it(key!))\(reason)"
                }
                lines.append(Line(sim: e.sim, text: "\(e.proc) \(text)"))
            case EventCatalogue.opApplied where key.map(keys.contains) == true:
                let account = e.string("account") ?? "?"
                let seq = e.int("seq") ?? 0
                seqs["\(account)/\(seq)"] = key!
                let again = appliedSeq[key!] != nil
                if !again { appliedSeq[key!] = seq }
                applies[key!, default: 0] += 1
                var text = "server applied \(it(key!))" + (again ? " AGAIN" : "")
                    + (sentKey != key ? " (under key \(sentKey!))" : "") + " as seq \(seq) of account \(account)"
                if again { text += ": the same intent applied \(applies[key!]!) times now" }
                if let version = e.int("version") { text += ", draft version \(version)" }
                if e["conflict"]?.boolValue == true { text += " (a conflict: the server's policy settled it)" }
                lines.append(Line(sim: e.sim, text: text))
            case EventCatalogue.opDuplicate where key.map(keys.contains) == true:
                lines.append(
                    Line(
                        sim: e.sim,
                        text: "server answered a resend of \(it(key!)) as a duplicate: applied once, "
                            + "not again"))
            case EventCatalogue.opRejected where key.map(keys.contains) == true:
                lines.append(
                    Line(sim: e.sim, text: "server rejected \(it(key!))" + (e.string("reason").map { ": \($0)" } ?? ""))
                )
            case EventCatalogue.noticeSent:
                let account = e.string("account") ?? ""
                let mine = (e["seqs"]?.arrayValue ?? []).compactMap(\.intValue).compactMap { seqs["\(account)/\($0)"] }
                guard let first = mine.first else { continue }
                lines.append(
                    Line(
                        sim: e.sim,
                        text: "server told the broker that \(account)'s head moved to "
                            + "\(e.int("head") ?? 0) (a notice about \(it(first)))"))
            case EventCatalogue.hintAccepted where e.proc == "broker":
                let account = e.string("account") ?? ""
                let mine = (e["seqs"]?.arrayValue ?? []).compactMap(\.intValue).compactMap { seqs["\(account)/\($0)"] }
                guard let first = mine.first, let hint = e.string("hint") else { continue }
                ourHints["\(incarnation)/\(hint)"] = first
                heldFor["\(incarnation)/\(hint)"] = e.string("device") ?? "?"
                lines.append(
                    Line(
                        sim: e.sim,
                        text: "broker accepted hint \(hint) for \(e.string("device") ?? "?") "
                            + "(head \(e.int("head") ?? 0))"))
            case let type where e.proc == "broker" && type.hasPrefix("hint."):
                let device = e.string("device") ?? "?"
                guard let hint = e.string("hint"), let mine = ourHints["\(incarnation)/\(hint)"] else {
                    // The same id, given again by a restarted broker, is another hint's.
                    if let hint = e.string("hint"),
                        type == EventCatalogue.hintDelivered { deliveredTo["\(device)/\(hint)"] = nil }
                    continue
                }
                let reason = e.string("reason").map { ": \($0)" } ?? ""
                if HintAccounting.fates.contains(type) { heldFor["\(incarnation)/\(hint)"] = nil }
                switch type {
                case EventCatalogue.hintDelivered:
                    deliveredTo["\(device)/\(hint)"] = mine
                    let waited =
                        e["waitedSec"]?.doubleValue.map { $0 >= 1 ? " after holding it \(formatSim($0))" : "" } ?? ""
                    lines.append(Line(sim: e.sim, text: "broker delivered hint \(hint) to \(device)\(waited)"))
                case EventCatalogue.hintDuplicated:
                    deliveredTo["\(device)/\(hint)"] = mine
                    lines.append(
                        Line(sim: e.sim, text: "broker sent hint \(hint) to \(device) a second time (a duplicate)"))
                case EventCatalogue.hintHeld:
                    lines.append(Line(sim: e.sim, text: "broker held hint \(hint) for \(device)\(reason)"))
                default:
                    let fate = String(type.dropFirst(5))
                    lines.append(
                        Line(
                            sim: e.sim,
                            text: "broker \(fate) hint \(hint) for \(device)\(reason): the hint died "
                                + "here; \(device)'s cursor will bring the change on its next pass"))
                }
            case EventCatalogue.hintReceived:
                guard let hint = e.string("hint"), deliveredTo["\(e.proc)/\(hint)"] != nil else { continue }
                lines.append(Line(sim: e.sim, text: "\(e.proc) received hint \(hint) (head \(e.int("head") ?? 0))"))
            case EventCatalogue.hintIgnored:
                guard let hint = e.string("hint"), deliveredTo["\(e.proc)/\(hint)"] != nil else { continue }
                lines.append(Line(sim: e.sim, text: "\(e.proc) ignored hint \(hint): \(e.string("reason") ?? "?")"))
            case EventCatalogue.changeApplied where key.map(keys.contains) == true:
                guard origin[key!] != e.proc, appliedOn[key!, default: []].insert(e.proc).inserted else { continue }
                lines.append(
                    Line(
                        sim: e.sim,
                        text: "\(e.proc) applied \(it(key!)) (seq \(e.int("seq") ?? 0)) in pass "
                            + "\(e.int("pass") ?? 0), a pass by \(e.string("trigger") ?? "?")"))
            default:
                break
            }
        }
        for (what, more) in repeats.sorted(by: { $0.key < $1.key }) where more > 0 {
            let parts = what.split(separator: "/")
            lines.append(Line(sim: lines.last?.sim ?? 0, text: "(\(parts[0]) did the same \(more) more time(s): "
                + "\(parts.count > 1 ? parts[1] : "") events, in events.jsonl)"))
        }
        for key in keys.sorted() where seqs.values.contains(key) == false && origin[key] != nil {
            lines.append(
                Line(sim: lines.last?.sim ?? 0, text: "by the end of the events the server had not applied \(key)"))
        }
        return lines
    }

    /// One hint id: per broker incarnation, what it was about, its fate, and what the device did with it.
    private func hintStory(_ hint: String) -> [Line] {
        var lines: [Line] = []
        var incarnation = 0
        var device: String?
        for e in events {
            if e.proc == "broker" && e.type == EventCatalogue.processStarted {
                incarnation += 1
                if incarnation > 1 { device = nil }
                continue
            }
            if e.proc == "broker", e.type.hasPrefix("hint."), e.string("hint") == hint {
                let reason = e.string("reason").map { ": \($0)" } ?? ""
                switch e.type {
                case EventCatalogue.hintAccepted:
                    device = e.string("device")
                    let seqs = (e["seqs"]?.arrayValue ?? []).compactMap(\.intValue).map(String.init).joined(
                        separator: ", ")
                    lines.append(
                        Line(
                            sim: e.sim,
                            text: "broker (incarnation \(incarnation)) accepted hint \(hint) for "
                                + "\(device ?? "?"): account \(e.string("account") ?? "?") head "
                                + "\(e.int("head") ?? 0), about seq \(seqs)"
                                + (e.string("origin").map { " saved on \($0)" } ?? "")))
                case EventCatalogue.hintDelivered:
                    lines.append(Line(sim: e.sim, text: "broker delivered it to \(device ?? "?")"))
                case EventCatalogue.hintDuplicated:
                    lines.append(Line(sim: e.sim, text: "broker sent it a second time (a duplicate)"))
                case EventCatalogue.hintHeld:
                    lines.append(Line(sim: e.sim, text: "broker held it\(reason)"))
                default:
                    lines.append(
                        Line(sim: e.sim, text: "broker \(e.type.dropFirst(5)) it\(reason): the hint died here"))
                }
            } else if let target = device, e.proc == target, e.string("hint") == hint {
                switch e.type {
                case EventCatalogue.hintReceived: lines.append(Line(sim: e.sim, text: "\(target) received it"))
                case EventCatalogue.hintIgnored:
                    lines.append(Line(sim: e.sim, text: "\(target) ignored it: \(e.string("reason") ?? "?")"))
                default: break
                }
            } else if let target = device, e.proc == target, e.type == EventCatalogue.passStart,
                e.string("trigger") == "push",
                lines.last?.text.hasSuffix("received it") == true
            {
                lines.append(
                    Line(sim: e.sim, text: "\(target) started pass \(e.int("pass") ?? 0) for it (trigger push)"))
            }
        }
        return lines
    }
}
