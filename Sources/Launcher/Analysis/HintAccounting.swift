import LabKit
import SyncDevice
import SyncProtocol
import SyncServer

/// The fate of every hint, from the broker's decision events, per broker incarnation (a restarted broker numbers its
/// hints again), checked against the broker's own counters for its last incarnation.
struct HintAccounting {
    struct Counts {
        var accepted = 0, delivered = 0, dropped = 0, duplicated = 0, coalesced = 0, throttled = 0, discarded = 0
        var expired = 0, held = 0, lostInCrash = 0
    }

    static let fates = [
        EventCatalogue.hintDelivered, EventCatalogue.hintDropped, EventCatalogue.hintCoalesced,
        EventCatalogue.hintThrottled, EventCatalogue.hintDiscarded, EventCatalogue.hintExpired,
    ].map(\.name)

    var counts = Counts()
    var problems: [String] = []
    /// Fate of each hint by "incarnation/hint id".
    var fate: [String: String] = [:]
    /// Hints accepted per change seq and account, for the lineage.
    var hintsBySeq: [String: [String]] = [:]

    init(_ data: RunData) {
        var incarnation = 0
        var open: Set<String> = []   // accepted, no fate yet, current incarnation
        var last = Counts()          // the current incarnation's counts, to compare with the broker's counters
        for event in data.events where event.proc == "broker" {
            if event.type == EventCatalogue.processStarted {
                if incarnation > 0 {
                    counts.lostInCrash += open.count
                    for id in open { fate[id] = "lost with the broker" }
                }
                open = []
                last = Counts()
                incarnation += 1
                continue
            }
            guard event.type.hasPrefix("hint."), let hint = event.string("hint") else { continue }
            let id = "\(incarnation)/\(hint)"
            switch event.type {
            case EventCatalogue.hintAccepted:
                counts.accepted += 1
                last.accepted += 1
                if fate[id] != nil || open.contains(id) {
                    problems.append("hint \(hint) was accepted twice by one broker at \(formatSim(event.sim))")
                }
                open.insert(id)
                let account = event.string("account") ?? ""
                for seq in event["seqs"]?.arrayValue ?? [] {
                    if let s = seq.intValue { hintsBySeq["\(account)/\(s)", default: []].append(id) }
                }
            case EventCatalogue.hintDuplicated:
                counts.duplicated += 1
                last.duplicated += 1
            case let type where HintAccounting.fates.contains(type):
                guard open.remove(id) != nil else {
                    problems.append("hint \(hint) has a second fate (\(type)) at \(formatSim(event.sim)), or was never "
                        + "accepted")
                    continue
                }
                fate[id] = String(type.dropFirst(5))
                switch type {
                case EventCatalogue.hintDelivered: counts.delivered += 1; last.delivered += 1
                case EventCatalogue.hintDropped: counts.dropped += 1; last.dropped += 1
                case EventCatalogue.hintCoalesced: counts.coalesced += 1; last.coalesced += 1
                case EventCatalogue.hintThrottled: counts.throttled += 1; last.throttled += 1
                case EventCatalogue.hintDiscarded: counts.discarded += 1; last.discarded += 1
                default: counts.expired += 1; last.expired += 1
                }
            default:
                break
            }
        }
        counts.held = open.count
        last.held = open.count
        for id in open { fate[id] = "held" }
        // The broker's own counters (asked at the end of the run, so of its last incarnation) must agree with its
        // events: a hint the broker dropped without saying so shows here.
        guard let counters = data.stats["broker"]?["hints"] else { return }
        let pairs: [(String, Int)] = [
            ("accepted", last.accepted), ("delivered", last.delivered), ("dropped", last.dropped),
            ("duplicated", last.duplicated), ("coalesced", last.coalesced), ("throttled", last.throttled),
            ("discarded", last.discarded), ("expired", last.expired), ("held", last.held),
        ]
        for (field, fromEvents) in pairs {
            guard let counted = counters[field]?.intValue else { continue }
            if counted != fromEvents {
                problems.append("the broker counts \(counted) hints \(field) but its events show \(fromEvents): "
                    + (counted > fromEvents ? "\(counted - fromEvents) \(field) without an event"
                        : "\(fromEvents - counted) events it does not count"))
            }
        }
    }
}
