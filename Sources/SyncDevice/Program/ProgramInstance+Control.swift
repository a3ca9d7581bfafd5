import LabKit
import SyncProtocol

extension ProgramInstance {
    /// A control command from the launcher: lifecycle commands change the platform model here and are told to the
    /// program only where its connection must know (`network`); edits, passes and status are the program's.
    public mutating func onControl(_ request: Control, from peer: [UInt8], now: Double) -> [ProgramDirective] {
        self.now = max(self.now, now)
        let pending = PendingControl(peer: peer, request: request)
        let command: DeviceControl
        do {
            command = try DeviceControl.parse(request)
        } catch {
            return answer(pending, .refused("\(error)"))
        }
        switch command {
        case .ping:
            return answer(pending, .ack("pong", nil))
        case .edit(let edit):
            var fields: [(String, JSONValue)] = [("type", "edit"), ("draft", .string(edit.draft)),
                                                 ("action", .string(edit.action.rawValue))]
            if let title = edit.title { fields.append(("title", .string(title))) }
            if let body = edit.body { fields.append(("body", .string(body))) }
            return ask(.edit(pending), fields)
        case .status:
            return ask(.status(pending), [("type", "status")])
        case .sync(let force):
            return finishing(trigger(.manual, now: now, sync: pending, force: force))
        case .lifecycle(let lifecycle):
            return finishing(onLifecycle(lifecycle, now: now)) + answer(pending, .ack("done", nil))
        case .stop:
            return answer(pending, .ack("stopping", nil)) + [.stop]
        case .reinstall, .crashAt:
            return answer(pending, .refused("\(request.command) is not supported for an outside device "
                + "(docs/DEVICE-CONTRACT.md, \"Not supported\")"))
        }
    }

    func answer(_ pending: PendingControl, _ answer: ControlAnswer) -> [ProgramDirective] {
        var out: [ProgramDirective] = [.log(EventLine(.controlReceived, answer.eventFields(pending.request)))]
        if let ack = answer.ack(pending.request) { out.append(.answer(to: pending.peer, ack)) }
        return out
    }

    mutating func onLifecycle(_ command: LifecycleCommand, now: Double) -> [ProgramDirective] {
        var out: [ProgramDirective] = []
        var new = environment
        let before = environment.app
        func app(_ type: EventType) -> ProgramDirective {
            .log(EventLine(type, [("by", "user"), ("from", .string(before.rawValue))]))
        }
        switch command {
        case .open:
            out.append(app(.appForeground))
            new.app = .foreground
            out += apply(new)
            if before == .closed || before == .forceQuit { out += registerJob() }
            out += trigger(identity.platform == .web && before == .background ? .visibility : .foreground, now: now)
        case .background:
            out.append(app(.appBackground))
            new.app = .background
            out += apply(new)
        case .forceQuit, .close:
            out.append(app(command == .close ? .appClosed : .appForceQuit))
            // The app's process is gone: no follow-up starts in it (a running pass is the program's own and ends).
            if let dropped = followUp {
                followUp = nil
                out.append(.log(EventLine(.passesDropped, [
                    ("count", 1), ("triggers", .array([.string(dropped.trigger.rawValue)])),
                    ("reason", "the app was closed"),
                ])))
                for sync in dropped.syncs { out += answer(sync, .refused("the app was closed before its pass ran")) }
            }
            // The app's process dies with its pass, as the lab's own device's does (DeviceInstance.kill).
            if pass != nil {
                let closed = identity.platform == .web ? "the tab was closed" : "the app was closed"
                let reason = command == .close ? "\(closed) during a pass" : "force quit during a pass"
                out += killProgram(reason: reason, tellScheduler: false)
            }
            new.app = command == .close || identity.platform == .web ? .closed : .forceQuit
            out += apply(new)
        case .offline, .online:
            let online = command == .online
            out.append(.log(EventLine(online ? .netOnline : .netOffline)))
            new.online = online
            out += ask(.network, [("type", "network"), ("online", .bool(online))])
            out += apply(new)
            if online { out += trigger(.connectivity, now: now) }
        case .plug, .unplug:
            out.append(.log(EventLine(command == .plug ? .powerPlugged : .powerUnplugged)))
            new.charging = command == .plug
            out += apply(new)
        case .engagement(let opensPerDay):
            out.append(.log(EventLine(.engagementSet, [("opensPerDay", .double(opensPerDay))])))
            new.opensPerDay = max(0, opensPerDay)
            out += apply(new)
        case .refresh(let on):
            out.append(.log(EventLine(.refreshSet, [("on", .bool(on))])))
            new.refreshOn = on
            out += apply(new)
            out.append(reportGuarantee())
        }
        return out
    }

    mutating func apply(_ new: DeviceEnvironment) -> [ProgramDirective] {
        environment = new
        return schedulerOutput(scheduler.update(new, now: now, rng: &rng))
    }

    /// The status a `sync` or `status` answers: the lab's side, with what the program last said of its state.
    func statusData() -> JSONValue {
        .object([
            ("device", .string(identity.device)), ("platform", .string(identity.platform.rawValue)),
            ("account", .string(identity.account)), ("outside", true), ("cursor", .int(cursor)), ("head", .int(head)),
            ("pending", .int(pending)), ("passRunning", .bool(pass != nil)), ("app", .string(environment.app.rawValue)),
            ("online", .bool(environment.online)), ("charging", .bool(environment.charging)),
            ("doze", .bool(scheduler.dozing)), ("refreshOn", .bool(environment.refreshOn)),
            ("broker", .string(registered ? "registered" : "registering")), ("nowSim", .double(now)),
        ])
    }
}
