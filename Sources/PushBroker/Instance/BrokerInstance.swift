import LabKit
import SyncProtocol

/// The push broker's decisions, with no IO: registrations, the account's hints, the delivery profiles, chaos and the
/// accounting. It is handed the simulated time of each event and owns a generator seeded from `--seed`, so the same
/// seed and the same events give the same directives (docs/BROKER.md).
///
/// Each `on…` reacts to one event and returns what the shell must do, in order. Every decision is a `.log`.
public struct BrokerInstance: Sendable {
    public let directory: AccountDirectory
    public let profiles: ProfileSettings
    /// Simulated seconds a hint chaos chose to reorder waits for the device's next hint before it goes anyway.
    public let reorderWindowSec: Double
    public private(set) var chaos: ChaosSettings
    public private(set) var chaosByDevice: [String: ChaosSettings] = [:]

    var generator: SeededGenerator
    /// Registered devices in the order they registered; a device keeps its slot for the instance's life. The hint
    /// path works with slots: a device id is hashed once per event, not at every step of a hint.
    var devices: [RegisteredDevice] = []
    private var slots: [String: Int] = [:]
    /// Slots of every registered device, sorted by device id, so ticks visit devices in the same order on every run.
    private var sortedSlots: [Int] = []
    /// Slots of the registered devices of each account, sorted by device id, so hints fan out in the same order on
    /// every run.
    private var registeredByAccount: [String: [Int]] = [:]
    /// The highest head each account's notices named: what a resync hint carries.
    var latestHead: [String: Int] = [:]
    var hintNumber = 0
    /// Real nanoseconds of the message being handled (the driver sets it) and the wrong tokens per connection and
    /// per key it refills (docs/SECURITY.md).
    public var realNanos: UInt64 = 0
    private var tokens = TokenThrottle()
    /// Design switch `hintCarriesData`: each hint also carries its notice's changes (kept for the last 4,096 hints).
    public var hintCarriesData = false
    /// The accounts `hintCarriesData` applies to; nil: all.
    public var hintDataAccounts: Set<String>?
    /// A notice whose hints nothing can hold back is decided as one `fanOut`; false: every hint goes the path of
    /// `accept` and `enterChaos` (`FanOutTests` compares the two).
    var fansOut = true
    /// The change data a hint carries, by hint id (`hintCarriesData` only).
    public internal(set) var hintData: [String: JSONValue] = [:]
    var hintDataOrder: [String] = []
    var arrivals = 0
    /// Hints chaos delayed, sorted by (due, arrival).
    var delayed: [Delayed] = []
    var dropReasons: [String: Int] = [:]

    struct Delayed: Sendable {
        var due: Double
        var arrival: Int
        var slot: Int
        var pending: PendingHint
        var reorder: Bool
    }

    public init(directory: AccountDirectory, profiles: ProfileSettings = ProfileSettings(),
                chaos: ChaosSettings = .off, reorderWindowSec: Double = BrokerSettings().reorderWindowSec,
                seed: UInt64) {
        self.directory = directory
        self.profiles = profiles
        self.chaos = chaos
        self.reorderWindowSec = reorderWindowSec
        self.generator = SeededGenerator(seed: seed)
    }

    /// An instance started with a broker's settings, the design switch included.
    public init(directory: AccountDirectory, settings: BrokerSettings, seed: UInt64) {
        self.init(directory: directory, profiles: settings.profiles, chaos: settings.chaos,
                  reorderWindowSec: settings.reorderWindowSec, seed: seed)
        hintCarriesData = settings.hintCarriesData
        hintDataAccounts = settings.hintDataAccounts
    }

    // MARK: - Input from the sockets

    /// A message on the device ROUTER from routing id `peer`: `register` or `deviceState`. `user` is the device
    /// the connection's CURVE key is bound to (nil under NULL) and `connection` its file descriptor: a registration
    /// belongs to that key and that connection, never to a routing id alone.
    public mutating func onDeviceMessage(_ frames: [[UInt8]], peer: [UInt8], now: Double, user: String? = nil,
                                         connection: Int32 = -1) -> [BrokerDirective] {
        switch Codec.decodeOrReply(frames) {
        case .failure(let error):
            // Nobody answers an error, not even one that does not decode.
            let answer = frames.first != Array("SL1 error".utf8)
            return refusal(error.code, error.description, socket: answer ? .devices : nil, peer: peer)
        case .success(let message):
            switch message {
            case .register(let register):
                if let user, user != register.device {
                    return refusal(.badToken, "register: this connection's key is not device "
                        + "\"\(register.device)\"'s", socket: .devices, peer: peer, device: user)
                }
                return onRegister(register, peer: peer, now: now, user: user, connection: connection)
            case .deviceState(let state):
                return onDeviceState(state, peer: peer, now: now, user: user, connection: connection)
            case .error:
                let error = ProtocolError.unexpected(type: message.type, receiver: "the broker's device socket")
                return refusal(error.code, error.description, socket: nil, peer: peer)
            case .hello, .welcome, .push, .pushResult, .pull, .page, .notice, .registered, .hint, .control,
                .controlAck:
                let error = ProtocolError.unexpected(type: message.type, receiver: "the broker's device socket")
                return refusal(error.code, error.description, socket: .devices, peer: peer)
            }
        }
    }

    /// A message on the notices socket (PULL or SUB): the server's `notice`. Nobody can be answered there, so bad
    /// input is only logged.
    public mutating func onNoticeMessage(_ frames: [[UInt8]], now: Double) -> [BrokerDirective] {
        switch Codec.decodeOrReply(frames) {
        case .failure(let error):
            return refusal(error.code, error.description, socket: nil, peer: nil)
        case .success(let message):
            switch message {
            case .notice(let notice):
                return onNotice(notice, now: now)
            case .hello, .welcome, .push, .pushResult, .pull, .page, .register, .registered, .deviceState, .hint,
                .control, .controlAck, .error:
                let error = ProtocolError.unexpected(type: message.type, receiver: "the broker's notices socket")
                return refusal(error.code, error.description, socket: nil, peer: nil)
            }
        }
    }

    /// A message on the control ROUTER: `control` with `ping`, `stop`, `stats` or `chaos`.
    public mutating func onControlMessage(_ frames: [[UInt8]], peer: [UInt8], now: Double) -> [BrokerDirective] {
        switch Codec.decodeOrReply(frames) {
        case .failure(let error):
            return refusal(error.code, error.description, socket: .control, peer: peer)
        case .success(let message):
            switch message {
            case .control(let control):
                return onControl(control, peer: peer, now: now)
            case .hello, .welcome, .push, .pushResult, .pull, .page, .notice, .register, .registered, .deviceState,
                .hint, .controlAck, .error:
                let error = ProtocolError.unexpected(type: message.type, receiver: "the broker's control socket")
                return refusal(error.code, error.description, socket: .control, peer: peer)
            }
        }
    }

    // MARK: - Events

    /// A device asks for hints. Checked against the accounts file; a known device registering again (a restarted
    /// process, a new connection) moves its hints to the new routing id and keeps its state and held hints.
    public mutating func onRegister(_ register: Register, peer: [UInt8], now: Double, user: String? = nil,
                                    connection: Int32 = -1) -> [BrokerDirective] {
        let device = register.device
        guard let entry = directory[device] else {
            return refusal(.unknownDevice, "register: device \"\(device)\" is not in the accounts file",
                           socket: .devices, peer: peer, device: device)
        }
        let buckets = TokenThrottle.names(connection: PeerName.describe(peer), user: user)
        if case .refuse(let announce) = tokens.verdict(buckets, now: realNanos) {
            let line = EventLine(.authThrottled, [("device", .string(device)),
                                                    ("peer", .string(PeerName.describe(peer)))])
            return refusal(.badToken, "register: too many wrong tokens from this connection or key: at most "
                + "\(Int(TokenThrottle.burst)), then one a second", socket: .devices, peer: peer, device: device)
                + (announce ? [.log(line)] : [])
        }
        let tokenMatches = entry.token == register.token
        if !tokenMatches { tokens.failed(buckets, now: realNanos) }
        switch AccountsFile.contradiction(tokenMatches: tokenMatches, claimedAccount: register.account,
                                          claimedPlatform: register.platform, account: entry.account,
                                          platform: entry.platform) {
        case .token?:
            return refusal(.badToken, "register: wrong token for device \"\(device)\"", socket: .devices, peer: peer,
                           device: device)
        case .account?:
            return refusal(.wrongAccount, "register: device \"\(device)\" is not a device of account "
                + "\"\(register.account)\"", socket: .devices, peer: peer, device: device)
        case .platform(let platform)?:
            return refusal(.invalid, "register: device \"\(device)\" is \(platform.rawValue) in the accounts "
                + "file, not \(register.platform.rawValue)", socket: .devices, peer: peer, device: device)
        case nil:
            break
        }
        let replaced = slots[device] != nil
        let slot: Int
        if let known = slots[device] {
            slot = known
            devices[slot].peer = peer
            devices[slot].user = user
            devices[slot].connection = connection
        } else {
            let kind = profiles.kind(for: entry.platform)
            let served = profiles.serving(account: entry.account)
            slot = devices.count
            devices.append(RegisteredDevice(slot: slot, id: device, account: entry.account, platform: entry.platform,
                                            peer: peer, profile: DeliveryProfile(kind, settings: served)))
            slots[device] = slot
            devices[slot].user = user
            devices[slot].connection = connection
            let byID = { (other: Int) in self.devices[other].id > device }
            sortedSlots.insert(slot, at: sortedSlots.firstIndex(where: byID) ?? sortedSlots.endIndex)
            var list = registeredByAccount[entry.account] ?? []
            list.insert(slot, at: list.firstIndex(where: byID) ?? list.endIndex)
            registeredByAccount[entry.account] = list
        }
        return [
            .log(EventLine(.deviceRegistered, [
                ("device", .string(device)), ("account", .string(entry.account)),
                ("platform", .string(entry.platform.rawValue)),
                ("profile", .string(devices[slot].profile.kind.rawValue)), ("replaced", .bool(replaced)),
                ("peer", .string(PeerName.describe(peer))),
            ])),
            .reply(socket: .devices, peer: peer, message: .registered(Registered(device: device))),
        ]
    }

    /// A registered device reports what its OS sees. Only the connection that registered the device may.
    public mutating func onDeviceState(_ state: DeviceState, peer: [UInt8], now: Double, user: String? = nil,
                                       connection: Int32 = -1) -> [BrokerDirective] {
        guard let slot = slots[state.device], devices[slot].peer == peer, devices[slot].user == user,
              devices[slot].connection == connection
        else {
            return refusal(.notAuthenticated, "deviceState: device \"\(state.device)\" has not registered from this "
                + "connection; send register first", socket: .devices, peer: peer, device: state.device)
        }
        let conditions = DeviceConditions(state)
        var out: [BrokerDirective] = [
            .log(EventLine(.deviceState, [
                ("device", .string(state.device)), ("online", .bool(state.online)),
                ("app", .string(state.app.rawValue)), ("doze", .bool(state.doze)),
                ("refreshOff", .bool(state.refreshOff)),
            ]))
        ]
        devices[slot].conditions = conditions
        withProfile(of: slot, now: now, into: &out) { profile in
            profile.conditionsChanged(to: conditions, now: now)
        }
        return out
    }

    /// The server says an account's head moved: one hint per registered device of the account but the origin.
    public mutating func onNotice(_ notice: Notice, now: Double) -> [BrokerDirective] {
        guard directory.accounts.contains(notice.account) else {
            return refusal(.invalid, "notice: unknown account \"\(notice.account)\"", socket: nil, peer: nil)
        }
        latestHead[notice.account] = max(latestHead[notice.account] ?? 0, notice.head)
        let registered = registeredByAccount[notice.account] ?? []
        var targets: [Int] = []
        targets.reserveCapacity(registered.count)
        for slot in registered where devices[slot].id != notice.origin {
            targets.append(slot)
        }
        let seqs = JSONValue.array(notice.changes.map { .int($0.seq) })
        let fields = NoticeFields(origin: notice.origin, seqs: seqs)
        let newDraft = notice.changes.contains { $0.version == 1 }
        var out: [BrokerDirective] = []
        out.reserveCapacity(1 + 2 * targets.count)
        out.append(.log(EventLine(.noticeReceived, [
            ("account", .string(notice.account)), ("head", .int(notice.head)), ("origin", .string(notice.origin)),
            ("seqs", seqs), ("hints", .int(targets.count)),
        ])))
        if let fanOut = fanOut(targets, account: notice.account, head: notice.head, notice: fields,
                               newDraft: newDraft, now: now) {
            out.append(.fanOut(fanOut))
            return out
        }
        // Every hint of the notice is accepted before the first goes on: the shell writes their events with one
        // write(2) before the sends, instead of one write per hint.
        var accepted: [PendingHint] = []
        accepted.reserveCapacity(targets.count)
        for slot in targets {
            var pending = accept(slot: slot, head: notice.head, notice: fields, resync: false, now: now, into: &out)
            pending.newDraft = newDraft
            if attachesData(notice.account) {
                attachData(notice.changes, to: pending.id, into: &out)
            }
            accepted.append(pending)
        }
        for (slot, pending) in zip(targets, accepted) {
            enterChaos(pending, slot: slot, now: now, into: &out)
        }
        return out
    }

    /// The shell tried to send a hint the instance asked for (to `target`, as its `.deliver` said); `failure` is nil
    /// when libzmq took it.
    public mutating func onSent(_ target: HintTarget, hint: HintRef, copy: DeliveryCopy, failure: SendFailure?,
                                now: Double) -> [BrokerDirective] {
        sent(target, hint: hint, copy: copy, failure: failure, now: now).map { [$0] } ?? []
    }

    /// `onSent`'s one directive, or nil: a send's outcome is at most one event, so the driver carries it out with no
    /// list made for every hint. The device is found by its slot, with no lookup by name.
    public mutating func sent(_ target: HintTarget, hint: HintRef, copy: DeliveryCopy, failure: SendFailure?,
                              now: Double) -> BrokerDirective? {
        let slot = target.slot
        guard devices.indices.contains(slot), devices[slot].target === target else { return nil }
        let device = target.id
        switch copy {
        case .original:
            guard let index = devices[slot].sending.firstIndex(where: { $0.ref == hint }) else { return nil }
            let pending = devices[slot].sending.remove(at: index)
            if let failure {
                return dropped(pending, slot: slot, reason: failure.rawValue)
            }
            devices[slot].counters.delivered += 1
            return .hintDelivered(target, hint: hint, waitedSec: roundedSeconds(now - pending.acceptedAt))
        case .duplicate:
            if let failure {
                return .log(EventLine(.hintDuplicateFailed, [
                    ("hint", .string(hint.id)), ("device", .string(device)), ("reason", .string(failure.rawValue)),
                ]))
            }
            devices[slot].counters.duplicated += 1
            return .log(EventLine(.hintDuplicated, [
                ("hint", .string(hint.id)), ("device", .string(device)), ("head", .int(hint.head)),
            ]))
        }
    }

    /// Simulated time reached a deadline: delayed hints arrive, reordered ones give up waiting, doze windows open,
    /// TTLs run out.
    public mutating func onTick(now: Double) -> [BrokerDirective] {
        var out: [BrokerDirective] = []
        let due = delayed.prefix(while: { $0.due <= now })
        delayed.removeFirst(due.count)
        for item in due {
            devices[item.slot].delayedCount -= 1
            arrive(item.pending, slot: item.slot, reorder: item.reorder, now: now, into: &out)
        }
        for slot in sortedSlots {
            let parked = devices[slot].parked
            if parked.contains(where: { $0.releaseAt <= now }) {
                devices[slot].parked = parked.filter { $0.releaseAt > now }
                for item in parked where item.releaseAt <= now {
                    offer(item.pending, slot: slot, now: now, into: &out)
                }
            }
            let conditions = devices[slot].conditions
            withProfile(of: slot, now: now, into: &out) { profile in profile.tick(conditions, now: now) }
        }
        if let next = nextDeadline {
            out.append(.scheduleTick(at: next))
        }
        return out
    }

    /// Changes the chaos settings (flags at start, the `chaos` control command at run time).
    public mutating func onChaos(_ change: ChaosChange) throws(BrokerError) -> [BrokerDirective] {
        var fields: [(String, JSONValue)]
        switch change {
        case .off(nil):
            chaos = .off
            chaosByDevice = [:]
            fields = [("scope", "all"), ("off", true)]
        case .off(let device?):
            guard directory[device] != nil else { throw .invalid("unknown device \"\(device)\"") }
            chaosByDevice[device] = nil
            fields = [("scope", "device"), ("device", .string(device)), ("off", true)]
        case .set(nil, _):
            let settings = try change.applied(to: chaos)
            chaos = settings
            fields = [("scope", "global")] + settings.fields
        case .set(let device?, _):
            guard directory[device] != nil else { throw .invalid("unknown device \"\(device)\"") }
            let settings = try change.applied(to: chaosByDevice[device] ?? chaos)
            chaosByDevice[device] = settings
            fields = [("scope", "device"), ("device", .string(device))] + settings.fields
        }
        return [.log(EventLine(.faultSet, fields))]
    }

    // MARK: - Accounting

    /// The counters over every device; `balances` holds between any two events.
    public var counters: HintCounters {
        devices.reduce(HintCounters()) { $0 + $1.settledCounters }
    }

    /// One device's counters, if it registered.
    public func counters(for device: String) -> HintCounters? {
        slots[device].map { devices[$0].settledCounters }
    }

    /// The `stats` control reply: `hints` (the report's counters), `dropReasons`, `devices` and `chaos`.
    public var stats: JSONValue {
        let perDevice = sortedSlots.map { slot -> (String, JSONValue) in
            let record = devices[slot]
            return (record.id, .object([
                ("account", .string(record.account)), ("platform", .string(record.platform.rawValue)),
                ("profile", .string(record.profile.kind.rawValue)),
            ] + record.settledCounters.fields))
        }
        let reasons = dropReasons.keys.sorted().map { ($0, JSONValue.int(dropReasons[$0]!)) }
        return .object([
            ("hints", .object(counters.fields)),
            ("dropReasons", .object(reasons)),
            ("devices", .object(perDevice)),
            ("chaos", .object(chaos.fields)),
        ])
    }

    /// A connection of the device socket ended: a device registered over it gets no more hints until it registers
    /// again (they are counted `unreachable`, as for any device that is gone), so a later connection that presents
    /// the same routing id receives nothing meant for it.
    public mutating func onConnectionEnded(_ connection: Int32) {
        guard connection >= 0 else { return }
        for slot in devices.indices where devices[slot].connection == connection {
            devices[slot].peer = []
            devices[slot].user = nil
            devices[slot].connection = -1
        }
    }

    private func refusal(_ code: ErrorCode, _ message: String, socket: BrokerSocket?, peer: [UInt8]?,
                         device: String? = nil) -> [BrokerDirective] {
        let message = Self.bounded(message)
        var fields: [(String, JSONValue)] = [
            ("code", .string(code.rawValue)), ("message", .string(message)),
            ("peer", .string(peer.map(PeerName.describe) ?? "notices")),
        ]
        if let device { fields.append(("device", .string(device))) }
        var out: [BrokerDirective] = [.log(EventLine(.requestRefused, fields))]
        if let socket, let peer {
            out.append(.reply(socket: socket, peer: peer, message: .error(ErrorReply(code: code, message: message))))
        }
        return out
    }

    /// An error message cut to at most 256 bytes on a character boundary: a refusal quotes a prefix of a huge
    /// field, never all of it.
    static func bounded(_ message: String) -> String {
        guard message.utf8.count > 256 else { return message }
        var prefix = ""
        for character in message {
            if prefix.utf8.count + character.utf8.count > 232 { break }
            prefix.append(character)
        }
        return prefix + "…(\(message.utf8.count) bytes)"
    }

    /// Millisecond precision: enough for simulated waits, and the log stays readable.
    func roundedSeconds(_ seconds: Double) -> Double {
        (seconds * 1000).rounded() / 1000
    }
}
