import LabKit
import SyncDevice
import SyncProtocol

/// The control commands, as `DeviceShell+Control` carries them out: the same acknowledgements, the same
/// `control.received` events, the same order of ledger commit and instance step. Keep the two in step.
extension SimDeviceShell {
    func onControlFrames(_ frames: [[UInt8]]) {
        guard !stopping, frames.count >= 2 else { return }
        let message: Message
        switch Codec.decodeOrReply(Array(frames.dropFirst())) {
        case .success(let decoded):
            message = decoded
        case .failure(let error):
            emit("request.refused", [("code", .string(error.code.rawValue)),
                                     ("message", .string(error.description)), ("peer", "control")])
            reply(.error(ErrorReply(code: error.code, message: error.description)))
            return
        }
        guard case .control(let request) = message else {
            let error = ProtocolError.unexpected(type: message.type, receiver: "a device's control socket")
            emit("request.refused", [("code", .string(error.code.rawValue)),
                                     ("message", .string(error.description)), ("peer", "control")])
            reply(.error(ErrorReply(code: error.code, message: error.description)))
            return
        }
        handle(request)
        if stopping {
            finish()
        } else {
            tick()
        }
    }

    enum ControlOutcome {
        case ack(String, JSONValue?)
        case later
        case refused(String)
    }

    func handle(_ request: Control) {
        let outcome: ControlOutcome
        do {
            outcome = try execute(request)
        } catch let error as DeviceError {
            outcome = .refused(error.description)
        } catch {
            outcome = .refused("\(error)")
        }
        let args = JSONValue.object(request.args.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) })
        switch outcome {
        case .ack(let detail, let data):
            emit("control.received", [("command", .string(request.command)), ("args", args), ("ok", true),
                                      ("detail", .string(detail))])
            reply(.controlAck(ControlAck(req: request.req, ok: true, detail: detail, data: data)))
        case .later:
            emit("control.received", [("command", .string(request.command)), ("args", args), ("ok", true),
                                      ("detail", "answered when the pass ends")])
        case .refused(let message):
            emit("control.received", [("command", .string(request.command)), ("args", args), ("ok", false),
                                      ("detail", .string(message))])
            reply(.controlAck(ControlAck(req: request.req, ok: false, detail: message)))
        }
    }

    func execute(_ request: Control) throws -> ControlOutcome {
        let now = self.now
        func lifecycle(_ command: LifecycleCommand) -> ControlOutcome {
            drive { $0.onLifecycle(command, now: now) }
            return .ack("ok", nil)
        }
        switch request.command {
        case "ping":
            return .ack("pong", nil)
        case "edit":
            let edit = try LocalEdit.parse(request.args)
            let saved = try ledger.save(edit, device: configuration.identity.device, wall: wall)
            drive { $0.onEditSaved(saved, now: now) }
            return .ack("saved on this device", .object([("key", .string(saved.key))]))
        case "open": return lifecycle(.open)
        case "background": return lifecycle(.background)
        case "forceQuit": return lifecycle(.forceQuit)
        case "close": return lifecycle(.close)
        case "offline": return lifecycle(.offline)
        case "online": return lifecycle(.online)
        case "plug": return lifecycle(.plug)
        case "unplug": return lifecycle(.unplug)
        case "engagement":
            guard let opens = request.args["opensPerDay"]?.doubleValue, opens >= 0, opens.isFinite else {
                throw DeviceError.badArguments(command: "engagement", reason: "\"opensPerDay\" must be a number ≥ 0")
            }
            return lifecycle(.engagement(opensPerDay: opens))
        case "refresh":
            guard let on = request.args["on"]?.boolValue else {
                throw DeviceError.badArguments(command: "refresh", reason: "\"on\" must be true or false")
            }
            return lifecycle(.refresh(on: on))
        case "sync":
            let forceArg = request.args["force"]
            guard forceArg == nil || forceArg?.boolValue != nil else {
                throw DeviceError.badArguments(command: "sync", reason: "\"force\" must be true or false")
            }
            let token = nextToken
            nextToken += 1
            syncWaiters[token] = request.req
            drive { $0.onSync(token: token, force: forceArg?.boolValue ?? false, now: now) }
            return .later
        case "status":
            return .ack("ok", statusData())
        case "stop":
            stopping = true
            return .ack("stopping", nil)
        default:
            return .refused("unknown command \"\(request.command)\"; a device knows ping, edit, "
                + "open, background, forceQuit, close, offline, online, plug, unplug, engagement, refresh, sync, "
                + "status, stop")
        }
    }

    /// The `status` data, as `DeviceShell.statusData` builds it.
    func statusData() -> JSONValue {
        let now = self.now
        var fields = instance.statusFields(now: now)
        do {
            let (ops, pending) = try ledger.countsJSON()
            fields.insert(("ops", ops), at: 5)
            fields.insert(("pending", .int(pending)), at: 6)
            fields.append(("nowSim", .double((now * 1000).rounded() / 1000)))
            fields.append(("metrics", .object(try ledger.metrics(now: now))))
        } catch {
            fields.append(("ledgerError", .string("\(error)")))
        }
        return .object(fields)
    }
}
