import SyncProtocol

/// What the broker keeps for one registered device: where to send, what its OS reported, its profile's state, its
/// counters and the hints chaos is holding back for it.
struct RegisteredDevice: Sendable {
    let id: String
    let account: String
    let platform: Platform
    /// How its hints' directives name it, rendered once.
    let target: HintTarget
    /// The routing id of the connection that registered last.
    var peer: [UInt8]
    /// The ZAP user id (CURVE key's device) and file descriptor of that connection; nil / -1 under NULL.
    var user: String?
    var connection: Int32 = -1
    var conditions: DeviceConditions = .registered
    var profile: DeliveryProfile
    /// `profile.deliversAtOnce(conditions)`, renewed after every step of the profile (`BrokerInstance.withProfile`,
    /// the only place the profile or, just before it, the conditions change).
    var deliversAtOnce: Bool
    /// Monotonic counters; `held` is computed by `heldCount`.
    var counters = HintCounters()
    /// Hints chaos delayed for this device (they sit in the instance's delay queue).
    var delayedCount = 0
    /// Hints chaos holds back until the device's next hint overtakes them, with the second they go anyway.
    var parked: [(pending: PendingHint, releaseAt: Double)] = []
    /// Hints handed to the shell whose send outcome has not come back (the outcome comes back before the next event,
    /// so this holds one or two).
    var sending: [PendingHint] = []

    init(slot: Int, id: String, account: String, platform: Platform, peer: [UInt8], profile: DeliveryProfile) {
        self.id = id
        self.account = account
        target = HintTarget(slot: slot, id: id, account: account)
        self.platform = platform
        self.peer = peer
        self.profile = profile
        deliversAtOnce = profile.deliversAtOnce(.registered)
    }

    var heldCount: Int { profile.heldCount + delayedCount + parked.count + sending.count }

    /// The counters with `held` filled in.
    var settledCounters: HintCounters {
        var counters = counters
        counters.held = heldCount
        return counters
    }

    /// The earliest second this device needs a tick.
    var nextDeadline: Double? {
        let parkedDeadline = parked.lazy.map(\.releaseAt).min()
        switch (profile.nextDeadline, parkedDeadline) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }
}
