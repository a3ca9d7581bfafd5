import LabKit
import SyncDevice
import SyncProtocol
import SyncServer

extension InvariantChecks {
    // MARK: - hints-are-references

    /// No hint on the wire carries anything but the hint id, the account and the head: every frame the broker says
    /// it sent (`hint.delivered` with the keys of its body), and every frame a device received, decoded or refused.
    static func hintsAreReferences(_ data: RunData) -> InvariantResult {
        let name = "hints-are-references"
        let allowed = ["account", "head", "hint"]
        var violations: [Violation] = []
        var sent = 0, received = 0
        for event in data.events {
            let types = ["hint.delivered", "hint.received", "hint.malformed"]
            guard types.contains(event.type), let keysValue = event["keys"] else {
                if event.type == EventCatalogue.hintDelivered { sent += 1 }
                continue
            }
            if event.type == EventCatalogue.hintDelivered { sent += 1 } else { received += 1 }
            let keys = (keysValue.arrayValue ?? []).compactMap(\.stringValue).sorted()
            guard keys != allowed else { continue }
            let device = event.type == EventCatalogue.hintDelivered ? event.string("device") : event.proc
            let extra = keys.filter { !allowed.contains($0) }
            let what = event.type == EventCatalogue.hintDelivered ? "the broker sent"
                : (event.type == EventCatalogue.hintMalformed
                ? "\(event.proc) refused" : "\(event.proc) received")
            violations.append(Violation(device: device, account: device.flatMap { data.device($0)?.account },
                "\(what) hint \(event.string("hint") ?? "?") at \(formatSim(event.sim)) carrying "
                    + (extra.isEmpty ? "keys \(keys.joined(separator: ", "))"
                        : "data: \(extra.joined(separator: ", "))")
                    + " — a hint is a reference (hint, account, head), never content"))
        }
        return InvariantResult(name, violations,
                               held: sent + received == 0 ? "no hint was sent"
                                : "\(sent) hints sent and \(received) received, each only {hint, account, head}")
    }

    // MARK: - hints-accounted

    /// Each accepted hint is delivered, dropped, coalesced, throttled, discarded, expired or still held (hints held
    /// by a broker that was killed are lost with it), and the broker's own counters agree with its events.
    static func hintsAccounted(_ data: RunData) -> InvariantResult {
        let name = "hints-accounted"
        let accounting = HintAccounting(data)
        let c = accounting.counts
        var violations = accounting.problems.map { Violation(device: nil, account: nil, $0) }
        let settled = c.delivered + c.dropped + c.coalesced + c.throttled + c.discarded + c.expired + c.held
            + c.lostInCrash
        if c.accepted != settled {
            violations.append(Violation(device: nil, account: nil,
                "accepted \(c.accepted) ≠ delivered \(c.delivered) + dropped \(c.dropped) + "
                    + "coalesced \(c.coalesced) + "
                    + "throttled \(c.throttled) + discarded \(c.discarded) + expired \(c.expired) + held \(c.held) + "
                    + "lost with a killed broker \(c.lostInCrash)"))
        }
        var detail = "\(c.accepted) accepted = \(c.delivered) delivered + \(c.dropped) dropped + "
            + "\(c.coalesced) coalesced + "
            + "\(c.throttled) throttled + \(c.discarded) discarded + \(c.expired) expired + \(c.held) held"
        if c.lostInCrash > 0 { detail += " + \(c.lostInCrash) lost with a killed broker" }
        detail += " (\(c.duplicated) duplicates beside); the broker's counters agree"
        return InvariantResult(name, violations, held: detail)
    }
}
