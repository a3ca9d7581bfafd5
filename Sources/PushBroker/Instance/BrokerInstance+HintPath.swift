import LabKit
import SyncProtocol

/// The path of a hint through the broker: accepted, through chaos, offered to its platform profile, sent, dropped
/// or held (BrokerInstance.swift holds the state and the inputs).
extension BrokerInstance {
    // MARK: - The path of a hint

    /// Design switch `hintCarriesData`, for `account`: its hints carry their notice's changes.
    func attachesData(_ account: String) -> Bool {
        hintCarriesData && hintDataAccounts.map { $0.contains(account) } != false
    }

    /// `hintCarriesData`: the hint will carry the notice's changes (the data) as well as the reference.
    mutating func attachData(_ changes: [ChangeRef], to hint: String, into out: inout [BrokerDirective]) {
        let data = JSONValue.array(changes.map {
            .object([("seq", .int($0.seq)), ("draft", .string($0.draft)), ("version", .int($0.version))])
        })
        hintData[hint] = data
        hintDataOrder.append(hint)
        if hintDataOrder.count > 4_096 { hintData[hintDataOrder.removeFirst()] = nil }
        out.append(.log(EventLine(.hintDataAttached, [
            ("hint", .string(hint)), ("changes", .int(changes.count)),
            ("reason", "hintCarriesData: the push carries the change, not only a reference"),
        ])))
    }

    mutating func accept(slot: Int, head: Int, notice: NoticeFields, resync: Bool,
                         now: Double, into out: inout [BrokerDirective]) -> PendingHint {
        hintNumber += 1
        let hint = HintRef(number: hintNumber, head: head)
        devices[slot].counters.accepted += 1
        out.append(.hintAccepted(devices[slot].target, hint: hint, notice: notice, resync: resync))
        return PendingHint(ref: hint, account: devices[slot].account, acceptedAt: now)
    }

    func chaosSettings(for slot: Int) -> ChaosSettings {
        chaosByDevice.isEmpty ? chaos : chaosByDevice[devices[slot].id] ?? chaos
    }

    /// Chaos sits between the server and the profile: a hint may be lost, delayed or held back for reordering before
    /// the push service's rules see it. Draws happen in a fixed order (loss, delay, reorder) per hint.
    mutating func enterChaos(_ pending: PendingHint, slot: Int, now: Double,
                                     into out: inout [BrokerDirective]) {
        let settings = chaosSettings(for: slot)
        if generator.chance(settings.loss) {
            drop(pending, slot: slot, reason: "chaos-loss", into: &out)
            return
        }
        let delay = settings.drawDelay(&generator)
        let reorder = generator.chance(settings.reorder)
        guard delay > 0 else {
            arrive(pending, slot: slot, reorder: reorder, now: now, into: &out)
            return
        }
        arrivals += 1
        let item = Delayed(due: now + delay, arrival: arrivals, slot: slot, pending: pending, reorder: reorder)
        delayed.insert(item, at: delayed.firstIndex(where: { $0.due > item.due }) ?? delayed.endIndex)
        devices[slot].delayedCount += 1
        held(pending, slot: slot, reason: "chaos-delay", extra: [("untilSec", .double(roundedSeconds(item.due)))],
             into: &out)
        out.append(.scheduleTick(at: item.due))
    }

    /// A hint reaches the profile, unless chaos holds it back until the device's next hint has overtaken it.
    mutating func arrive(_ pending: PendingHint, slot: Int, reorder: Bool, now: Double,
                                 into out: inout [BrokerDirective]) {
        if reorder {
            let releaseAt = now + reorderWindowSec
            devices[slot].parked.append((pending, releaseAt))
            held(pending, slot: slot, reason: "chaos-reorder", into: &out)
            out.append(.scheduleTick(at: releaseAt))
            return
        }
        offer(pending, slot: slot, now: now, into: &out)
        let parked = devices[slot].parked
        guard !parked.isEmpty else { return }
        devices[slot].parked = []
        for item in parked {
            offer(item.pending, slot: slot, now: now, into: &out)
        }
    }

    mutating func offer(_ pending: PendingHint, slot: Int, now: Double,
                                into out: inout [BrokerDirective]) {
        let conditions = devices[slot].conditions
        // The hint goes straight out (the profile would say so and change nothing): no decision list. The answer is
        // kept from the profile's last step (asking the profile copies it: ≈ 200 instructions a hint).
        assert(devices[slot].deliversAtOnce == devices[slot].profile.deliversAtOnce(conditions), "kept past a change")
        if devices[slot].deliversAtOnce {
            send(pending, slot: slot, into: &out)
            return
        }
        withProfile(of: slot, now: now, into: &out) { profile in profile.offer(pending, conditions, now: now) }
    }

    /// Runs one profile step and carries out its decisions; asks for a tick when the profile's deadline moved.
    mutating func withProfile(of slot: Int, now: Double, into out: inout [BrokerDirective],
                                      _ step: (inout DeliveryProfile) -> [ProfileDecision]) {
        let before = devices[slot].profile.nextDeadline
        let decisions = step(&devices[slot].profile)
        // The profile and the conditions change only here (the conditions just before a step): the one place to
        // renew what `offer`'s fast path reads.
        devices[slot].deliversAtOnce = devices[slot].profile.deliversAtOnce(devices[slot].conditions)
        for decision in decisions {
            apply(decision, slot: slot, now: now, into: &out)
        }
        if let after = devices[slot].profile.nextDeadline, after != before {
            out.append(.scheduleTick(at: after))
        }
    }

    private mutating func apply(_ decision: ProfileDecision, slot: Int, now: Double,
                                into out: inout [BrokerDirective]) {
        switch decision {
        case .deliver(let pending):
            send(pending, slot: slot, into: &out)
        case .hold(let pending, let reason):
            held(pending, slot: slot, reason: reason, into: &out)
        case .coalesce(let pending, let by):
            devices[slot].counters.coalesced += 1
            out.append(.log(EventLine(.hintCoalesced, [
                ("hint", .string(pending.id)), ("device", .string(devices[slot].id)), ("by", .string(by)),
            ])))
        case .throttle(let pending):
            devices[slot].counters.throttled += 1
            out.append(.log(EventLine(.hintThrottled, [
                ("hint", .string(pending.id)), ("device", .string(devices[slot].id)), ("reason", "background-budget"),
            ])))
        case .discard(let pending, let reason):
            devices[slot].counters.discarded += 1
            out.append(.log(EventLine(.hintDiscarded, [
                ("hint", .string(pending.id)), ("device", .string(devices[slot].id)), ("reason", .string(reason)),
            ])))
        case .drop(let pending, let reason):
            drop(pending, slot: slot, reason: reason, into: &out)
        case .expire(let pending):
            devices[slot].counters.expired += 1
            out.append(.log(EventLine(.hintExpired, [
                ("hint", .string(pending.id)), ("device", .string(devices[slot].id)), ("reason", "ttl"),
                ("waitedSec", .double(roundedSeconds(now - pending.acceptedAt))),
            ])))
        case .resync, .resyncIgnored:
            let account = devices[slot].account
            let pending = accept(slot: slot, head: latestHead[account] ?? 0, notice: Self.resyncNotice,
                                 resync: true, now: now, into: &out)
            if decision == .resync {
                send(pending, slot: slot, into: &out)
            } else {
                // FCM calls onDeletedMessages all the same; the app's handler does nothing with it.
                apply(.discard(pending, reason: "deleted-messages-ignored"), slot: slot, now: now, into: &out)
            }
        }
    }

    /// Hands a hint to the shell; chaos may send it twice.
    mutating func send(_ pending: PendingHint, slot: Int, into out: inout [BrokerDirective]) {
        let peer = devices[slot].peer
        let target = devices[slot].target
        devices[slot].sending.append(pending)
        out.append(.deliver(target, peer: peer, hint: pending.ref, copy: .original))
        if generator.chance(chaosSettings(for: slot).duplicate) {
            out.append(.deliver(target, peer: peer, hint: pending.ref, copy: .duplicate))
        }
    }

    mutating func drop(_ pending: PendingHint, slot: Int, reason: String,
                               into out: inout [BrokerDirective]) {
        out.append(dropped(pending, slot: slot, reason: reason))
    }

    /// Counts a dropped hint; its `hint.dropped`.
    mutating func dropped(_ pending: PendingHint, slot: Int, reason: String) -> BrokerDirective {
        devices[slot].counters.dropped += 1
        dropReasons[reason, default: 0] += 1
        return .log(EventLine(.hintDropped, [
            ("hint", .string(pending.id)), ("device", .string(devices[slot].id)), ("reason", .string(reason)),
        ]))
    }

    func held(_ pending: PendingHint, slot: Int, reason: String, extra: [(String, JSONValue)] = [],
                      into out: inout [BrokerDirective]) {
        out.append(.log(EventLine(.hintHeld, [
            ("hint", .string(pending.id)), ("device", .string(devices[slot].id)), ("reason", .string(reason)),
        ] + extra)))
    }

    /// What a resync hint's `hint.accepted` says of its notice: the broker's own, with no changes.
    static let resyncNotice = NoticeFields(origin: "broker", seqs: .array([]))

    var nextDeadline: Double? {
        let deadlines = [delayed.first?.due] + devices.map(\.nextDeadline)
        return deadlines.compactMap { $0 }.min()
    }
}
