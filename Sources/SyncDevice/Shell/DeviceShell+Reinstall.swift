import Foundation
import LabKit
import SyncProtocol

/// The `reinstall` control command (issue 13, seed 000's symptom): the user deletes the app and installs it again.
/// The app's data goes with it: the ledger file (and its WAL) is deleted and made again, with a new install id, so
/// every op not yet settled on the server is gone. `app.reinstalled` names them, so a verdict can say which edit was
/// lost and why.
extension DeviceShell {
    /// Wipes the app's data and starts it again, closed; returns the keys of the unsettled ops lost.
    func reinstall() throws -> [String] {
        let now = self.now
        drive { $0.onUninstall(now: now) }
        let lost = try ledger.unsettledKeys()
        let oldInstall = (try? ledger.stateString("install")) ?? nil
        let path = ledger.path
        ledger = nil  // closes the file before it is deleted
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = path + suffix
            if FileManager.default.fileExists(atPath: file) { try FileManager.default.removeItem(atPath: file) }
        }
        ledger = try Ledger(path: path, synchronous: configuration.synchronous)
        var settings = configuration.settings
        settings.startState = .closed  // a fresh install is not running until the user opens it
        let restored = try ledger.prepare(identity: configuration.identity, clock: configuration.clock,
                                          settings: settings, now: now)
        let install = (try? ledger.stateString("install")) ?? nil
        instance = DeviceInstance(identity: configuration.identity, settings: settings, restored: restored,
                                  brokerEnabled: broker != nil,
                                  rng: SeededGenerator.derived(seed: configuration.seed,
                                                               name: configuration.identity.device + "/reinstall"))
        events.emit("app.reinstalled", [
            ("lost", .int(lost.count)), ("keys", .array(lost.map { .string($0) })),
            ("oldInstall", oldInstall.map { .string($0) } ?? .null), ("install", install.map { .string($0) } ?? .null),
            ("reason", "the app was deleted before these ops were sent: its database went with it"),
        ])
        drive { $0.start(now: now) }
        return lost
    }
}
