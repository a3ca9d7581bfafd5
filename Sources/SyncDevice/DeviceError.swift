/// What went wrong in the device, said so a person knows what to do.
public enum DeviceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A control command's arguments were wrong; nothing was written.
    case badArguments(command: String, reason: String)
    /// The ledger's cursor is not where a page application expected it: the page is not applied.
    case cursorMoved(expected: Int, found: Int)
    /// The database is not a device ledger (or is from a newer build).
    case notALedger(path: String, reason: String)
    /// Another process holds the ledger's file: a running device pool keeps its devices' ledgers to itself.
    case ledgerLocked(path: String)
    /// A pool's spec file cannot be used; nothing was started.
    case badPoolSpec(path: String, reason: String)
    /// A local edit could not be committed (the ledger's own error): it is not saved, nothing else changed.
    case editNotSaved(String)

    public var description: String {
        switch self {
        case .badArguments(let command, let reason): return "\(command): \(reason)"
        case .cursorMoved(let expected, let found):
            return "cursor is \(found), expected \(expected): the page was not applied"
        case .notALedger(let path, let reason): return "\(path) is not a device ledger: \(reason)"
        case .ledgerLocked(let path):
            return "\(path) is locked by the process that runs it: a running device pool holds its devices' ledgers "
                + "to itself (exclusive locking, docs/DEVICE.md, \"Device pool\"); read it once the pool has stopped"
        case .badPoolSpec(let path, let reason): return "pool spec \(path): \(reason)"
        case .editNotSaved(let reason): return reason
        }
    }
}
