import LabKit
import SyncProtocol

/// Control commands (docs/ARCHITECTURE.md, docs/DEVICE.md): each is acknowledged, with `ok: false` and a detail
/// saying why when it cannot be carried out (unknown command, bad arguments), and written as a `control.received`
/// event. Frames that are not a `control` message are answered with `error`.
extension DeviceDriver {
    /// A message on the control socket: the peer's routing id, then the message's frames.
    public func onControlFrames(_ frames: [[UInt8]]) {
        guard !killed, let peer = frames.first, frames.count >= 2 else { return }
        let request: Control
        switch Codec.decodeOrReply(Array(frames.dropFirst())) {
        case .success(.control(let decoded)):
            request = decoded
        case .success(let other):
            refuse(peer, ProtocolError.unexpected(type: other.type, receiver: "a device's control socket"))
            return
        case .failure(let error):
            refuse(peer, error)
            return
        }
        handle(request, from: peer)
    }

    func refuse(_ peer: [UInt8], _ error: ProtocolError) {
        io.emit("request.refused", [("code", .string(error.code.rawValue)), ("message", .string(error.description)),
                                    ("peer", "control")])
        try? reply(to: peer, .error(ErrorReply(code: error.code, message: error.description)))
    }

    /// Carries out one control request (a pool hands its devices theirs here) and answers it.
    public func handle(_ request: Control, from peer: [UInt8]) {
        guard !killed else { return }
        let outcome: ControlOutcome
        do {
            outcome = try execute(DeviceControl.parse(request), request: request, from: peer)
        } catch let error as DeviceError {
            outcome = .refused(error.description)
        } catch {
            outcome = .refused("\(error)")
        }
        guard !killed else { return }
        io.emit("control.received", outcome.eventFields(request))
        if let ack = outcome.ack(request) { try? reply(to: peer, .controlAck(ack)) }
    }

    func execute(_ command: DeviceControl, request: Control, from peer: [UInt8]) throws -> ControlOutcome {
        let now = self.now
        switch command {
        case .ping:
            return .ack("pong", nil)
        case .edit(let edit):
            let saved = try save(edit)
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

    /// The user edits a draft: the instance has it committed first (`saveEdit`); throws why when nothing was saved.
    @discardableResult
    public func save(_ edit: LocalEdit) throws -> SavedEdit {
        lastSave = nil
        drive { $0.onEdit(edit, now: now) }
        switch lastSave {
        case .success(let saved): return saved
        case .failure(let failure): throw DeviceError.editNotSaved(failure.message)
        case nil: throw DeviceError.editNotSaved(killed ? "the process died" : "the instance did not save it")
        }
    }

    /// Asks the instance for a manual pass; `waiter` is answered when it ends.
    public func requestSync(force: Bool, waiter: SyncWaiter) {
        let token = nextToken
        nextToken += 1
        syncWaiters[token] = waiter
        drive { $0.onSync(token: token, force: force, now: now) }
    }

    /// The `status` data: what the live instance knows, the ledger's op counts and the seed-001 metrics.
    public func statusData() -> JSONValue {
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

    /// The `reinstall` command (issue 13, seed 000's symptom): the user deletes the app and installs it again. The
    /// app's data goes with it: the ledger file is deleted and made again, with a new install id, so every op not
    /// yet settled on the server is gone. `app.reinstalled` names them, so a verdict can say which edit was lost and
    /// why. Returns their keys.
    func reinstall() throws -> [String] {
        let now = self.now
        drive { $0.onUninstall(now: now) }
        let lost = try ledger.unsettledKeys()
        let oldInstall = (try? ledger.stateString("install")) ?? nil
        ledger = nil  // closes the file before it is deleted
        ledger = try io.openLedger(wiping: true)
        var settings = configuration.settings
        settings.startState = .closed  // a fresh install is not running until the user opens it
        let restored = try ledger.prepare(identity: configuration.identity, clock: configuration.clock,
                                          settings: settings, now: now)
        let install = (try? ledger.stateString("install")) ?? nil
        instance = DeviceInstance(identity: configuration.identity, settings: settings, restored: restored,
                                  brokerEnabled: brokerEnabled,
                                  rng: SeededGenerator.derived(seed: configuration.seed,
                                                               name: configuration.identity.device + "/reinstall"))
        io.emit("app.reinstalled", [
            ("lost", .int(lost.count)), ("keys", .array(lost.map { .string($0) })),
            ("oldInstall", oldInstall.map { .string($0) } ?? .null), ("install", install.map { .string($0) } ?? .null),
            ("reason", "the app was deleted before these ops were sent: its database went with it"),
        ])
        drive { $0.start(now: now) }
        return lost
    }
}
