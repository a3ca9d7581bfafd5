import Foundation
import LabKit

/// What a design switch made a device, the server or the broker do to an op, in a sentence that names the switch:
/// the story of a broken half is told from its own events, not as the lab's design would have played it.
extension Explain {
    func switchLine(
        _ e: Event, keys: Set<String>, it: (String) -> String, keyIn: (Event, String) -> String?,
        origin: [String: String], accountOf: [String: String], accountOfKey: [String: String],
        appliedSeq: [String: Int], appliedOn: [String: Set<String>]
    ) -> Line? {
        let reason = e.string("reason").map { ": \($0)" } ?? ""
        // Most switch events name the ops they concern in `keys`: the line is told when one of them is ours.
        func aboutKeys(_ text: (String) -> String) -> Line? {
            keyIn(e, "keys").map { Line(sim: e.sim, text: text($0)) }
        }
        switch e.type {
        case EventCatalogue.queueLost:
            return aboutKeys { "\(e.proc) lost \(it($0)) before sending it\(reason) (switch opQueue = memory)" }
        case EventCatalogue.appReinstalled:
            return aboutKeys {
                "\(e.proc) lost \(it($0)): the app was reinstalled before any pass sent it (its database went with it)"
            }
        case EventCatalogue.replyBeforeCommit:
            return aboutKeys { "server answered for \(it($0)) before committing it (switch server.replyBeforeCommit)" }
        case EventCatalogue.ackLost:
            return aboutKeys {
                "server's commit of \(it($0)) then failed (\(e.string("error") ?? "?")): "
                    + "\(e.string("device") ?? "the device") holds an acknowledgement for an op the server does not "
                    + "have (switch server.replyBeforeCommit)"
            }
        case EventCatalogue.opReapplied:
            guard let key = e.string("key"), keys.contains(key) else { return nil }
            return Line(sim: e.sim, text: "server applied \(it(key)) again although it knew the key (seq "
                + "\(e.int("seq") ?? 0)): its idempotency check is off (switch server.idempotency = false)")
        case EventCatalogue.faultInjected:
            guard let key = e.string("key"), let own = keys.first(where: { key == $0 || key.hasPrefix($0 + "~") })
            else { return nil }
            let kind = e.string("kind") ?? "?"
            return Line(sim: e.sim, text: kind == "dropReply"
                ? "server dropped its reply for \(it(own)) after the commit (fault dropReply): "
                    + "\(e.string("device") ?? "the device") cannot tell whether it was applied"
                : "server injected the fault \(kind) on \(it(own))")
        case EventCatalogue.leaseStranded:
            // The origin's own ops, still unsent: a pass that found ops claimed by a dead pass, never reclaimed.
            guard let key = keys.first(where: { origin[$0] == e.proc && appliedSeq[$0] == nil }) else { return nil }
            return Line(sim: e.sim, text: "\(e.proc)'s pass \(e.int("pass") ?? 0) found \(e.int("count") ?? 0) op(s) "
                + "stranded in 'sending', \(it(key)) among them: leases off (switch leases = false), nothing "
                + "reclaims them")
        case EventCatalogue.passSkippedPull:
            // Another device of the op's account, behind it, whose pass did not pull.
            guard let key = keys.first(where: { k in
                guard let seq = appliedSeq[k], let account = accountOfKey[k] else { return false }
                return origin[k] != e.proc && accountOf[e.proc] == account && (e.int("cursor") ?? 0) < seq
                    && !(appliedOn[k]?.contains(e.proc) ?? false)
            }) else { return nil }
            let trigger = e.string("trigger") ?? "?"
            return Line(sim: e.sim, text: "\(e.proc)'s pass \(e.int("pass") ?? 0) (trigger \(trigger))"
                + " did not pull \(it(key)) (cursor \(e.int("cursor") ?? 0), head \(e.int("head") ?? 0))\(reason) "
                + "(switch pullOn)")
        case EventCatalogue.pageLost:
            let seqs = Set((e["seqs"]?.arrayValue ?? []).compactMap(\.intValue))
            guard let key = keys.first(where: { appliedSeq[$0].map(seqs.contains) == true }) else { return nil }
            return Line(sim: e.sim, text: "\(e.proc) lost the page holding \(it(key)) (seq \(appliedSeq[key]!)): its "
                + "cursor was already past it\(reason) (switch cursorCommit = beforePage)")
        case EventCatalogue.replicaOwnWriteHidden:
            return aboutKeys {
                "\(e.proc)'s replica left out \(it($0)), acknowledged but not pulled yet (cursor "
                    + "\(e.int("cursor") ?? 0)), when a page touched draft \(e.string("draft") ?? "?"): its user no "
                    + "longer sees their own write (switch ownWrites = untilPulled)"
            }
        case EventCatalogue.outboxNewestFirst:
            return aboutKeys {
                "\(e.proc)'s pass \(e.int("pass") ?? 0) sent its outbox newest first, \(it($0)) among it, so a later "
                    + "edit of a draft can reach the server before an earlier one (switch outboxOrder = newestFirst)"
            }
        default:
            return nil
        }
    }
}
