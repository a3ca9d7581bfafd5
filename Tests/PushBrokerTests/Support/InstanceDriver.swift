import LabKit
import PushBroker
import SyncProtocol

/// Drives a `BrokerInstance` the way the shell does, with a fake clock: every send succeeds (or fails as told), ticks
/// come exactly when asked, and everything the instance said is kept for assertions.
struct InstanceDriver {
    var instance: BrokerInstance
    /// Simulated seconds.
    private(set) var now: Double = 0
    /// Every directive, in order: the decision log.
    private(set) var directives: [BrokerDirective] = []
    /// Hints each device got, in order, duplicates included.
    private(set) var received: [String: [Hint]] = [:]
    private(set) var replies: [(peer: [UInt8], message: Message)] = []
    private(set) var stopped = false
    /// Devices whose sends fail, and how.
    var failing: [String: SendFailure] = [:]
    /// How many notices were decided as one `fanOut`.
    private(set) var fanOuts = 0
    private var wakeAt: Double?

    init(_ instance: BrokerInstance) {
        self.instance = instance
    }

    init(profiles: ProfileSettings = ProfileSettings(), chaos: ChaosSettings = .off, seed: UInt64 = 1) {
        self.init(BrokerInstance(directory: Fixtures.directory, profiles: profiles, chaos: chaos, seed: seed))
    }

    /// A driver with `devices` registered, in that order (and, when `offline`, then reported offline).
    init(registered devices: String..., offline: Bool = false, profiles: ProfileSettings = ProfileSettings(),
         chaos: ChaosSettings = .off, seed: UInt64 = 1) {
        self.init(profiles: profiles, chaos: chaos, seed: seed)
        for device in devices { register(device) }
        if offline { for device in devices { state(device, online: false) } }
    }

    // MARK: - Events

    mutating func register(_ device: String, peer: String? = nil) {
        let entry = Fixtures.directory[device]!
        let message = Register(device: device, account: entry.account, platform: entry.platform, token: entry.token)
        run(instance.onRegister(message, peer: Array((peer ?? device).utf8), now: now))
    }

    mutating func state(_ device: String, online: Bool = true, app: AppState = .background, doze: Bool = false,
                        refreshOff: Bool = false, peer: String? = nil) {
        let state = DeviceState(device: device, online: online, app: app, doze: doze, refreshOff: refreshOff)
        run(instance.onDeviceState(state, peer: Array((peer ?? device).utf8), now: now))
    }

    /// A notice for `account` whose head moved to `head`; returns the directives it produced.
    @discardableResult
    mutating func notice(_ account: String = "acme", head: Int, origin: String = "server-side", version: Int = 1)
        -> [BrokerDirective]
    {
        let changes = [ChangeRef(seq: head, draft: "d-\(head)", version: version)]
        let before = directives.count
        run(instance.onNotice(Notice(account: account, head: head, origin: origin, changes: changes), now: now))
        return Array(directives[before...])
    }

    mutating func deviceFrames(_ frames: [[UInt8]], peer: String) {
        run(instance.onDeviceMessage(frames, peer: Array(peer.utf8), now: now))
    }

    mutating func control(_ command: String, _ args: [String: JSONValue] = [:]) -> ControlAck? {
        let before = replies.count
        run(instance.onControlMessage(Codec.encode(.control(Control(req: 1, command: command, args: args))),
                                      peer: Array("launcher".utf8), now: now))
        guard replies.count > before, case .controlAck(let ack) = replies[before].message else { return nil }
        return ack
    }

    /// Moves the fake clock to `time`, ticking the instance at every deadline it asked for on the way.
    mutating func advance(to time: Double) {
        while let wake = wakeAt, wake <= time {
            wakeAt = nil
            now = max(now, wake)
            run(instance.onTick(now: now))
        }
        now = max(now, time)
    }

    // MARK: - What happened

    /// Events of `type`, as field lists.
    func events(_ type: String) -> [JSONValue] {
        directives.compactMap { directive in
            guard let line = directive.event, line.type == type else { return nil }
            return .object(line.fields)
        }
    }

    func hintIDs(_ device: String) -> [String] { (received[device] ?? []).map(\.hint) }

    var lastReply: Message? { replies.last?.message }

    private mutating func run(_ list: [BrokerDirective]) {
        for directive in list {
            if case .fanOut(let fanOut) = directive {
                // Logged and carried out as the directives it stands for, as the driver carries them out.
                fanOuts += 1
                run(fanOut.directives)
                continue
            }
            directives.append(directive)
            switch directive {
            case let .deliver(target, _, hint, copy):
                let failure = failing[target.id]
                if failure == nil {
                    received[target.id, default: []].append(Hint(hint: hint.id, account: target.account,
                                                                 head: hint.head))
                }
                run(instance.onSent(target, hint: hint, copy: copy, failure: failure, now: now))
            case let .reply(_, peer, message):
                replies.append((peer, message))
            case let .scheduleTick(at):
                wakeAt = min(wakeAt ?? at, at)
            case .log, .hintAccepted, .hintDelivered, .fanOut:
                break
            case let .armCrash(control, peer):
                // No crash points here: the harness arms nothing and says so.
                run(instance.onCrashArmed(ok: true, detail: "armed (test harness)", control: control, peer: peer))
            case .stop:
                stopped = true
            }
        }
    }
}

extension ProfileSettings {
    /// The default profiles with `change` made.
    static func with(_ change: (inout ProfileSettings) -> Void) -> ProfileSettings {
        var settings = ProfileSettings()
        change(&settings)
        return settings
    }
}
