import LabKit
import SyncProtocol

/// The control socket's side of the driver: the instance decides every command (`DeviceInstance+Control`); the
/// driver hands it the request and carries out what it answers, and serves the pool and the tests' harness, which
/// call it directly.
extension DeviceDriver {
    /// A message on the control socket: the peer's routing id, then the message's frames.
    public func onControlFrames(_ frames: [[UInt8]]) {
        guard !killed, let peer = frames.first, frames.count >= 2 else { return }
        let token = nextToken
        drive { $0.onControlFrames(Array(frames.dropFirst()), from: peer, syncToken: token, now: now) }
    }

    /// One control request (a pool hands its devices theirs here), answered as the device's own process would.
    public func handle(_ request: Control, from peer: [UInt8]) {
        let token = nextToken
        drive { $0.onControl(request, from: peer, syncToken: token, now: now) }
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

    /// The `reinstall` command (issue 13, seed 000's symptom), after the instance heard of the uninstall: the user
    /// deletes the app and installs it again. The app's data goes with it: the ledger file is deleted and made
    /// again, with a new install id, so every op not yet settled on the server is gone. `app.reinstalled` names
    /// them, so a verdict can say which edit was lost and why. Returns their keys.
    func reinstall() throws -> [String] {
        let now = self.now
        _ = commitLedger()  // what the uninstall wrote (its pass's end), as a kill would leave it
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
        io.emit(.appReinstalled, [
            ("lost", .int(lost.count)), ("keys", .array(lost.map { .string($0) })),
            ("oldInstall", oldInstall.map { .string($0) } ?? .null), ("install", install.map { .string($0) } ?? .null),
            ("reason", "the app was deleted before these ops were sent: its database went with it"),
        ])
        drive { $0.start(now: now) }
        return lost
    }
}
