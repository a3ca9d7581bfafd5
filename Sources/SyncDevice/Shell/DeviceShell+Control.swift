import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// Control commands (docs/ARCHITECTURE.md, docs/DEVICE.md): each is acknowledged, with `ok: false` and a detail
/// saying why when it cannot be carried out (unknown command, bad arguments), and written as a `control.received`
/// event. Frames that are not a `control` message are answered with `error`.
extension DeviceShell {
    func onControlFrames(_ frames: [[UInt8]]) {
        guard let peer = frames.first, frames.count >= 2 else { return }
        let message: Message
        switch Codec.decodeOrReply(Array(frames.dropFirst())) {
        case .success(let decoded):
            message = decoded
        case .failure(let error):
            events.emit("request.refused", [("code", .string(error.code.rawValue)),
                                            ("message", .string(error.description)), ("peer", "control")])
            reply(to: peer, .error(ErrorReply(code: error.code, message: error.description)))
            return
        }
        guard case .control(let request) = message else {
            let error = ProtocolError.unexpected(type: message.type, receiver: "a device's control socket")
            events.emit("request.refused", [("code", .string(error.code.rawValue)),
                                            ("message", .string(error.description)), ("peer", "control")])
            reply(to: peer, .error(ErrorReply(code: error.code, message: error.description)))
            return
        }
        handle(request, from: peer)
    }

    func handle(_ request: Control, from peer: [UInt8]) {
        let outcome: ControlOutcome
        do {
            outcome = try execute(DeviceControl.parse(request), request: request, from: peer)
        } catch let error as DeviceError {
            outcome = .refused(error.description)
        } catch {
            outcome = .refused("\(error)")
        }
        events.emit("control.received", outcome.eventFields(request))
        if let ack = outcome.ack(request) { reply(to: peer, .controlAck(ack)) }
    }

    func execute(_ command: DeviceControl, request: Control, from peer: [UInt8]) throws -> ControlOutcome {
        let now = self.now
        switch command {
        case .ping:
            return .ack("pong", nil)
        case .edit(let edit):
            // The op and the replica commit first; only then is the edit saved and anything else happens.
            let saved = try ledger.save(edit, device: configuration.identity.device, wall: SimClock.wallMicros())
            reach(.deviceAfterLedgerWrite)
            drive { $0.onEditSaved(saved, now: now) }
            return .ack("saved on this device", .object([("key", .string(saved.key))]))
        case .lifecycle(let change):
            drive { $0.onLifecycle(change, now: now) }
            return .ack("ok", nil)
        case .sync(let force):
            requestSync(force: force, waiter: .control(peer: peer, req: request.req))
            return .later
        case .status:
            return .ack("ok", statusData())
        case .reinstall:
            let lost = try reinstall()
            return .ack("reinstalled: \(lost.count) unsent ops lost", .object([
                ("lost", .int(lost.count)), ("keys", .array(lost.map { .string($0) })),
            ]))
        case .stop:
            stopping = true
            return .ack("stopping", nil)
        case .crashAt(let args):
            return .ack(try crashPoints.control(args, role: "device"), nil)
        }
    }

    /// Asks the instance for a manual pass; `waiter` is answered when it ends.
    func requestSync(force: Bool, waiter: SyncWaiter) {
        let token = nextToken
        nextToken += 1
        syncWaiters[token] = waiter
        drive { $0.onSync(token: token, force: force, now: now) }
    }

    /// The `status` data: what the live instance knows, the ledger's op counts and the seed-001 metrics.
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
