import LabKit
import SyncProtocol

extension DeviceInstance {
    /// The user or the OS changed the device's state.
    public mutating func onLifecycle(_ command: LifecycleCommand, now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        var out: [DeviceDirective] = []
        var new = environment
        let before = environment.app
        switch command {
        case .open:
            out.append(.log(EventLine(.appForeground, [("by", "user"), ("from", .string(before.rawValue))])))
            out.append(.recordAppOpen(at: now, dataAge: lastSuccess.map { now - $0 }))
            new.app = .foreground
            out += apply(new, now: now)
            if before == .closed || before == .forceQuit {
                // A launch: the app registers its job before it finishes launching (seed 002).
                out += registerJob(now: now)
            }
            out += trigger(identity.platform == .web && before == .background ? .visibility : .foreground, now: now)
        case .background:
            out.append(.log(EventLine(.appBackground, [("by", "user"), ("from", .string(before.rawValue))])))
            new.app = .background
            out += apply(new, now: now)
        case .forceQuit:
            out.append(.log(EventLine(.appForceQuit, [("by", "user"), ("from", .string(before.rawValue))])))
            out += kill(now: now, reason: "force quit")
            out += dropMemoryQueue(reason: "opQueue=memory: the app was force-quit")
            new.app = identity.platform == .web ? .closed : .forceQuit
            out += apply(new, now: now)
        case .close:
            out.append(.log(EventLine(.appClosed, [("by", "user"), ("from", .string(before.rawValue))])))
            out += kill(now: now, reason: identity.platform == .web ? "tab closed" : "app closed")
            let tabWasOpen = before == .foreground || before == .background
            if identity.platform == .web && settings.unloadFlush == .beacon && environment.online && sessionReady
                && tabWasOpen
            {
                out.append(.claim(ClaimRequest(purpose: .beacon, limit: settings.batch, now: now,
                                               leaseSec: settings.leaseSec, ignoreBackoff: false)))
            } else if identity.platform == .web && settings.unloadFlush == .task && tabWasOpen {
                // An async flush started in the unload handler: the page is torn down before the task gets to run.
                out.append(.log(EventLine(.unloadTaskAbandoned, [
                    ("reason",
                     "unloadFlush=task: a task started at unload never runs; only sendBeacon outlives the page"),
                ])))
            }
            let ended = identity.platform == .web ? "tab closed" : "app closed"
            out += dropMemoryQueue(reason: "opQueue=memory: the app's process ended (\(ended))")
            new.app = .closed
            out += apply(new, now: now)
        case .offline:
            out.append(.log(EventLine(.netOffline)))
            new.online = false
            if var current = pass {
                // The connection is gone mid-request: whatever was in flight has an unknown outcome.
                let released = releaseUnknown(current.claimed, reason: "went offline", now: now)
                current.claimed = []
                pass = current
                out += released + endPass(outcome: .offline, now: now)
            }
            out += apply(new, now: now)
        case .online:
            out.append(.log(EventLine(.netOnline)))
            new.online = true
            out += apply(new, now: now)
            out += trigger(.connectivity, now: now)
        case .plug:
            out.append(.log(EventLine(.powerPlugged)))
            new.charging = true
            out += apply(new, now: now)
        case .unplug:
            out.append(.log(EventLine(.powerUnplugged)))
            new.charging = false
            out += apply(new, now: now)
        case .engagement(let opensPerDay):
            out.append(.log(EventLine(.engagementSet, [("opensPerDay", .double(opensPerDay))])))
            new.opensPerDay = max(0, opensPerDay)
            out += apply(new, now: now)
        case .refresh(let on):
            out.append(.log(EventLine(.refreshSet, [("on", .bool(on))])))
            new.refreshOn = on
            out += apply(new, now: now)
            // Registering again is how the app learns what it gets now (unavailable, or a window budget).
            out += reportGuarantee()
        }
        return finishing(out)
    }

    /// `opQueue: memory`: the process that held the queue is gone, and the queue with it.
    func dropMemoryQueue(reason: String) -> [DeviceDirective] {
        settings.opQueue == .memory ? [.dropQueue(reason: reason)] : []
    }

    /// Hands the new OS state to the platform model and runs whatever it grants.
    mutating func apply(_ new: DeviceEnvironment, now: Double) -> [DeviceDirective] {
        environment = new
        let output = scheduler.update(new, now: now, rng: &rng)
        return output.events.map { .log($0) } + output.grants.flatMap { trigger($0, now: now) }
    }

    /// The user edited a draft: the edit is committed to the ledger before anything else happens (`saveEdit`), and
    /// `onEditSaved` hears of it then.
    public func onEdit(_ edit: LocalEdit, now: Double) -> [DeviceDirective] {
        [.saveEdit(edit, answering: nil)]
    }

    /// A local edit was committed: it is "saved on this device"; in the foreground it starts a pass.
    public mutating func onEditSaved(_ edit: SavedEdit, now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        var out: [DeviceDirective] = [.log(EventLine(.opSaved, [
            ("key", .string(edit.key)), ("draft", .string(edit.draft)), ("action", .string(edit.action.rawValue)),
            ("account", .string(identity.account)), ("base", .int(edit.base)),
        ]))]
        if environment.isForeground {
            out += trigger(.localEdit, now: now)
        }
        return finishing(out)
    }

    /// A `sync` request: a manual pass, answered (through `token`) when that pass ends. `force` also claims ops
    /// that are still backing off.
    public mutating func onSync(token: Int, force: Bool, now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        return finishing(trigger(.manual, now: now, tokens: [token], force: force))
    }

    /// The status fields the instance knows (the shell adds the ledger's op counts).
    public func statusFields(now: Double) -> [(String, JSONValue)] {
        var freshness: [(String, JSONValue)] = [("kind", .string(self.freshness(at: now).kind))]
        switch self.freshness(at: now) {
        case .neverSynced: break
        case .current(let syncedAt):
            freshness += [("syncedAtSim", .double(syncedAt)), ("ageSec", .double(now - syncedAt))]
        case .stale(let syncedAt, let age):
            freshness += [("syncedAtSim", .double(syncedAt)), ("ageSec", .double(age))]
        }
        var broker: String
        switch brokerLink {
        case .disabled: broker = "disabled"
        case .registering: broker = "registering"
        case .registered: broker = "registered"
        case .refused(let reason, _): broker = "refused: \(reason)"
        }
        return [
            ("device", .string(identity.device)), ("platform", .string(identity.platform.rawValue)),
            ("account", .string(identity.account)), ("cursor", .int(cursor)), ("head", .int(head)),
            ("passRunning", .bool(pass != nil)), ("freshness", .object(freshness)),
            ("guarantee", .object(Self.fields(of: guarantee))), ("app", .string(environment.app.rawValue)),
            ("online", .bool(environment.online)), ("charging", .bool(environment.charging)),
            ("doze", .bool(scheduler.dozing)), ("refreshOn", .bool(environment.refreshOn)),
            ("opensPerDay", .double(environment.opensPerDay)), ("broker", .string(broker)),
            ("session", .bool(sessionReady)),
        ]
    }
}

extension DeviceInstance {
    /// The user deletes the app (and installs it again): a running pass dies with the process, as at a force quit;
    /// the shell then deletes the ledger file and starts a new instance on a new one.
    public mutating func onUninstall(now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        return kill(now: now, reason: "the app was deleted")
    }

    /// The process is stopping cleanly: what is in flight is released as unknown outcomes (resent later with the
    /// same keys) and the pass ends; no follow-up starts.
    public mutating func onStop(now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        followUp = nil
        queuedPasses = []
        guard let current = pass else { return [] }
        let released = releaseUnknown(current.claimed, reason: "the device process stopped", now: now)
        pass?.claimed = []
        pass?.workRemains = false
        return released + endPass(outcome: .stopped, now: now, tellScheduler: false)
    }
}
