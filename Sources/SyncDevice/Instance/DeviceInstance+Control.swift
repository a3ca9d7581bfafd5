import LabKit
import SyncProtocol

/// Control commands (docs/ARCHITECTURE.md, docs/DEVICE.md), decided here as the server and the broker decide theirs:
/// each is acknowledged, with `ok: false` and a detail saying why when it cannot be carried out (unknown command, bad
/// arguments, an edit the ledger could not commit), and written as a `control.received` event. Frames that are not a
/// `control` message are answered with `error`. What needs the machine (the ledger, the crash points, the app's
/// files) is a directive carrying the request, answered by the `on…` the driver calls when its part is done.
extension DeviceInstance {
    /// A message on the control socket, from `peer`.
    public mutating func onControlFrames(_ frames: [[UInt8]], from peer: [UInt8], syncToken: Int,
                                         now: Double) -> [DeviceDirective] {
        switch Codec.decodeOrReply(frames) {
        case .success(.control(let request)):
            return onControl(request, from: peer, syncToken: syncToken, now: now)
        case .success(let other):
            return refuseControl(peer, ProtocolError.unexpected(type: other.type,
                                                                receiver: "a device's control socket"))
        case .failure(let error):
            return refuseControl(peer, error)
        }
    }

    /// One control request (a pool hands its devices theirs here). `syncToken` is the number a `sync`'s answer
    /// waits under until its pass ends.
    public mutating func onControl(_ request: Control, from peer: [UInt8], syncToken: Int,
                                   now: Double) -> [DeviceDirective] {
        self.now = max(self.now, now)
        let pending = PendingControl(peer: peer, request: request)
        let command: DeviceControl
        do {
            command = try DeviceControl.parse(request)
        } catch {
            return Self.answer(pending, .refused("\(error)"))
        }
        switch command {
        case .ping:
            return Self.answer(pending, .ack("pong", nil))
        case .edit(let edit):
            return [.saveEdit(edit, answering: pending)]
        case .lifecycle(let change):
            return onLifecycle(change, now: now) + Self.answer(pending, .ack("ok", nil))
        case .sync(let force):
            return [.awaitPass(token: syncToken, answering: pending)]
                + onSync(token: syncToken, force: force, now: now) + Self.answer(pending, .later)
        case .status:
            return [.answerWithStatus(pending, detail: "ok")]
        case .reinstall:
            return onUninstall(now: now) + [.reinstall(answering: pending)]
        case .stop:
            return [.stop] + Self.answer(pending, .ack("stopping", nil))
        case .crashAt(let args):
            return [.armCrash(args, answering: pending)]
        }
    }

    /// The driver's part of a request is done: `answer` is what it found (a crash point armed, or why not).
    public func onControlDone(_ pending: PendingControl, _ answer: ControlAnswer) -> [DeviceDirective] {
        Self.answer(pending, answer)
    }

    /// The `edit` command's edit was committed (after `onEditSaved` ran), or could not be: nothing was saved.
    public func onEditAnswer(_ pending: PendingControl, saved: Result<SavedEdit, DeviceError>) -> [DeviceDirective] {
        switch saved {
        case .success(let edit):
            // `saw`: the draft as the user read it when the edit began (null: none), for read-your-writes.
            let saw: JSONValue = edit.before.map { row in
                .object([("title", row.title.map(JSONValue.string) ?? .null),
                         ("body", row.body.map(JSONValue.string) ?? .null), ("deleted", .bool(row.deleted)),
                         ("version", .int(row.version))])
            } ?? .null
            return Self.answer(pending, .ack("saved on this device", .object([("key", .string(edit.key)),
                                                                              ("saw", saw)])))
        case .failure(let error):
            return Self.answer(pending, .refused(error.description))
        }
    }

    /// The app was deleted and installed again (this is the new install's instance): `lost` are the keys of the ops
    /// that went with the old ledger.
    public func onReinstalled(lost: [String], answering pending: PendingControl) -> [DeviceDirective] {
        Self.answer(pending, .ack("reinstalled: \(lost.count) unsent ops lost", .object([
            ("lost", .int(lost.count)), ("keys", .array(lost.map { .string($0) })),
        ])))
    }

    /// The `control.received` event and, unless the answer comes later, the acknowledgement.
    static func answer(_ pending: PendingControl, _ answer: ControlAnswer) -> [DeviceDirective] {
        let event = DeviceDirective.log(EventLine(.controlReceived, answer.eventFields(pending.request)))
        guard let ack = answer.ack(pending.request) else { return [event] }
        return [event, .answerControl(to: pending.peer, .controlAck(ack))]
    }

    func refuseControl(_ peer: [UInt8], _ error: ProtocolError) -> [DeviceDirective] {
        [
            .log(EventLine(.requestRefused, [("code", .string(error.code.rawValue)),
                                               ("message", .string(error.description)), ("peer", "control")])),
            .answerControl(to: peer, .error(ErrorReply(code: error.code, message: error.description))),
        ]
    }
}
