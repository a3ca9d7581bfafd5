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

    func handle(_ request: Control) {
        let outcome: ControlOutcome
        do {
            outcome = try execute(DeviceControl.parse(request), request: request)
        } catch let error as DeviceError {
            outcome = .refused(error.description)
        } catch {
            outcome = .refused("\(error)")
        }
        emit("control.received", outcome.eventFields(request))
        if let ack = outcome.ack(request) { reply(.controlAck(ack)) }
    }

    func execute(_ command: DeviceControl, request: Control) throws -> ControlOutcome {
        let now = self.now
        switch command {
        case .ping:
            return .ack("pong", nil)
        case .edit(let edit):
            let saved = try ledger.save(edit, device: configuration.identity.device, wall: wall)
            drive { $0.onEditSaved(saved, now: now) }
            return .ack("saved on this device", .object([("key", .string(saved.key))]))
        case .lifecycle(let change):
            drive { $0.onLifecycle(change, now: now) }
            return .ack("ok", nil)
        case .sync(let force):
            let token = nextToken
            nextToken += 1
            syncWaiters[token] = request.req
            drive { $0.onSync(token: token, force: force, now: now) }
            return .later
        case .status:
            return .ack("ok", statusData())
        case .stop:
            stopping = true
            return .ack("stopping", nil)
        case .reinstall, .crashAt:
            // Not modelled yet by the simulation: say so rather than pretend.
            return .refused("\(request.command) is not modelled by the simulation yet; use synclab run")
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
