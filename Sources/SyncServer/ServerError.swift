import SQLite

/// Everything that can go wrong in the server, each case saying what was wrong and what to do about it.
public enum ServerError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A bad command line (exit 2).
    case usage(String)
    /// The accounts file is unreadable or wrong at `key` (a JSON path such as `accounts[0].devices[1].token`).
    case accounts(path: String, key: String, problem: String)
    /// The server could not start: an endpoint that will not bind, a database that will not open.
    case startup(String)
    /// SQLite failed; `busy` when another connection held the lock past the busy timeout.
    case database(String, busy: Bool)
    /// A pull from a cursor the account's head has not reached.
    case cursorAhead(account: String, cursor: Int, head: Int)
    /// A device that the database already binds to another account.
    case deviceMoved(device: String, from: String, to: String)
    /// A control command argument that is missing or out of range.
    case invalidArgument(command: String, name: String, problem: String)
    /// A socket failed while serving.
    case io(String)

    public var description: String {
        switch self {
        case .usage(let text): return text
        case .accounts(let path, let key, let problem):
            return key.isEmpty ? "\(path): \(problem)" : "\(path): \(key): \(problem)"
        case .startup(let text): return text
        case .database(let text, _): return "database: \(text)"
        case .cursorAhead(let account, let cursor, let head):
            return "cursor \(cursor) is beyond head \(head) of account \"\(account)\": pull from \(head) or lower"
        case .deviceMoved(let device, let from, let to):
            return "device \"\(device)\" belongs to account \"\(from)\" in the database, not \"\(to)\": "
                + "give it a new id or use a fresh --db"
        case .invalidArgument(let command, let name, let problem):
            return "\(command): argument \"\(name)\" \(problem)"
        case .io(let text): return text
        }
    }

    /// Wraps a SQLite failure, keeping whether it was lock contention (worth a retry) or not.
    static func wrap(_ error: Error) -> ServerError {
        if let error = error as? ServerError { return error }
        if let error = error as? SQLiteError { return .database(error.description, busy: error.isBusy) }
        return .database("\(error)", busy: false)
    }
}
