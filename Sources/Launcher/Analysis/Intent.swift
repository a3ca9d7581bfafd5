import LabKit
import SyncDevice
import SyncProtocol
import SyncServer

/// What the users intended: every op saved, from the launcher's record of each edit it asked for (the key the
/// device acknowledged), the devices' `op.saved` events and their ledgers, with what the server did of each.
struct Intent {
    struct SavedOp {
        let key: String
        let device: String
        let account: String?
        let draft: String
        let action: String
        let savedSim: Double
    }

    private(set) var ops: [SavedOp] = []
    private(set) var opByKey: [String: SavedOp] = [:]
    private(set) var ledgerRow: [String: LedgerSnapshot.OpRow] = [:]
    private(set) var changesByKey: [String: [ServerSnapshot.ChangeRow]] = [:]
    let settings: [String: DeviceSettings]

    init(_ data: RunData) {
        settings = Dictionary(data.devices.map { ($0.id, $0.settings) }, uniquingKeysWith: { a, _ in a })
        for change in data.changes { changesByKey[change.key, default: []].append(change) }
        func add(_ op: SavedOp) {
            guard opByKey[op.key] == nil else { return }
            opByKey[op.key] = op
            ops.append(op)
        }
        for event in data.events {
            switch (event.proc, event.type) {
            case ("launcher", EventCatalogue.scenarioAction) where event.string("action") == "edit":
                guard let key = event.string("key"), let device = event.string("target") else { continue }
                add(SavedOp(key: key, device: device, account: data.device(device)?.account,
                            draft: event.string("draft") ?? "?", action: event.string("op") ?? "?",
                            savedSim: event.sim))
            case (_, EventCatalogue.opSaved):
                guard let key = event.string("key"), let device = data.device(event.proc) else { continue }
                add(SavedOp(key: key, device: device.id, account: device.account, draft: event.string("draft") ?? "?",
                            action: event.string("action") ?? "?", savedSim: event.sim))
            default:
                continue
            }
        }
        for device in data.devices {
            for row in device.ops {
                ledgerRow[row.key] = row
                add(SavedOp(key: row.key, device: device.id, account: device.account, draft: row.draft,
                            action: row.action.rawValue,
                            savedSim: data.simTime(wall: row.savedWall)))
            }
        }
    }

    /// Whether the op's app was reinstalled after it was saved (a new install starts with an empty ledger).
    func reinstalled(_ op: SavedOp, _ data: RunData) -> Bool {
        data.events.contains {
            $0.type == EventCatalogue.appReinstalled && $0.proc == op.device && $0.sim >= op.savedSim
        }
    }

    /// Why an op the user saved is not in its device's ledger: what happened to the device after the save.
    func whyMissing(_ op: SavedOp, _ data: RunData) -> String {
        for event in data.events where event.sim >= op.savedSim {
            let about = event.proc == op.device || event.string("target") == op.device
                || event.string("device") == op.device
            guard about else { continue }
            switch event.type {
            case EventCatalogue.appReinstalled:
                return "the app was reinstalled at \(formatSim(event.sim)) before any pass sent it"
            case EventCatalogue.processKilled:
                return "\(op.device) was killed at \(formatSim(event.sim)) and the op did not survive it (was it ever "
                    + "committed to the ledger?)"
            case EventCatalogue.appForceQuit:
                return "the app was force-quit at \(formatSim(event.sim)) and the op did not survive it (was it ever "
                    + "committed to the ledger?)"
            default:
                continue
            }
        }
        return "the ledger lost it"
    }
}
