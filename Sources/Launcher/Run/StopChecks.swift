import Foundation
import SQLite
import SyncProtocol
import SyncServer
import SyncDevice

/// What both runners (`LabRun`, `SimRun`) do the same way around a stop and at the heal.
enum StopChecks {
    /// The `state.checked` events for the ledgers of a stopped process, before it starts again: each shadow must be
    /// the server's changes replayed up to its stored cursor. A check of the durable state at the moment a kill left
    /// it, which a later heal cannot repair away. A ledger not written yet is skipped.
    static func stateChecked(serverPath: String, ledgers: [(device: String, account: String, path: String)])
        -> [[(String, JSONValue)]]
    {
        guard !ledgers.isEmpty, let server = try? ServerSnapshot.read(path: serverPath) else { return [] }
        return ledgers.compactMap { ledger in
            guard Database.isInMemory(ledger.path) || FileManager.default.fileExists(atPath: ledger.path),
                  let state = try? LedgerSnapshot.read(path: ledger.path)
            else { return nil }
            let problem = CursorCheck.problem(cursor: state.cursor, shadow: state.shadow,
                                              changes: server.changes[ledger.account] ?? [])
            var fields: [(String, JSONValue)] = [("target", .string(ledger.device)), ("held", .bool(problem == nil)),
                                                 ("cursor", .int(state.cursor))]
            if let problem { fields.append(("detail", .string(problem))) }
            return fields
        }
    }

    /// The heal's commands, in order, once every process runs: faults and chaos off, then every device online, with
    /// background refresh on, and in the foreground.
    static func healCommands(_ topology: Topology) -> [(target: String, command: String, args: [String: JSONValue])] {
        var commands: [(target: String, command: String, args: [String: JSONValue])] = [
            ("server", "faults", ["off": true]), ("broker", "chaos", ["off": true]),
        ]
        for device in topology.devices {
            commands += [(device.id, "online", [:]), (device.id, "refresh", ["on": true]), (device.id, "open", [:])]
        }
        return commands
    }
}
