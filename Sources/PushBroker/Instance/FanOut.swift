/// A notice's hints decided in one step, when nothing can come between their acceptance and their sends: chaos off
/// for every target, no data attached, every target's profile delivering at once and nothing parked. It stands for
/// the directives `onNotice` would otherwise make one hint at a time (`hintAccepted` for each target, then `deliver`
/// for each), which the driver carries out one after another, with the same crash points and boundaries; the
/// instance has already accepted the hints and put them in their devices' `sending`, as that path does.
public struct FanOut: Sendable, Equatable {
    public let targets: [HintTarget]
    /// Each target's routing id, as its `deliver` names it.
    public let peers: [[UInt8]]
    /// The first target's hint number; each next target's is one more.
    public let firstNumber: Int
    public let head: Int
    public let notice: NoticeFields

    public func hint(_ index: Int) -> HintRef { HintRef(number: firstNumber + index, head: head) }

    /// The directives this one stands for, in order.
    public var directives: [BrokerDirective] {
        targets.indices.map { .hintAccepted(targets[$0], hint: hint($0), notice: notice, resync: false) }
            + targets.indices.map { .deliver(targets[$0], peer: peers[$0], hint: hint($0), copy: .original) }
    }
}

extension BrokerInstance {
    /// The fan-out of a notice to `targets` (their slots, in order), or nil when any hint of it could meet chaos, a
    /// profile's rules, data to attach or a parked hint: then each goes the path of `accept` and `enterChaos`.
    /// Draws nothing from the generator, as that path draws nothing with chaos off.
    mutating func fanOut(_ targets: [Int], account: String, head: Int, notice: NoticeFields, newDraft: Bool,
                         now: Double) -> FanOut? {
        guard fansOut, !targets.isEmpty, !attachesData(account) else { return nil }
        for slot in targets {
            assert(devices[slot].deliversAtOnce == devices[slot].profile.deliversAtOnce(devices[slot].conditions),
                   "kept past a change")
            guard devices[slot].deliversAtOnce, devices[slot].parked.isEmpty, chaosSettings(for: slot).isOff else {
                return nil
            }
        }
        let first = hintNumber + 1
        var hintTargets: [HintTarget] = []
        var peers: [[UInt8]] = []
        hintTargets.reserveCapacity(targets.count)
        peers.reserveCapacity(targets.count)
        for slot in targets {
            hintNumber += 1
            devices[slot].counters.accepted += 1
            var pending = PendingHint(ref: HintRef(number: hintNumber, head: head), account: account, acceptedAt: now)
            pending.newDraft = newDraft
            devices[slot].sending.append(pending)
            hintTargets.append(devices[slot].target)
            peers.append(devices[slot].peer)
        }
        return FanOut(targets: hintTargets, peers: peers, firstNumber: first, head: head, notice: notice)
    }
}
