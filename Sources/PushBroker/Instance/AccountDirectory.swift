import Foundation
import LabKit
import SyncProtocol

/// The run's accounts file (docs/ARCHITECTURE.md): which devices exist, their account, platform and token.
/// Registrations are checked against it.
public struct AccountDirectory: Sendable, Equatable {
    /// One device the accounts file declares.
    public struct Entry: Sendable, Equatable {
        public var device: String
        public var account: String
        public var platform: Platform
        public var token: String
    }

    public private(set) var entries: [String: Entry] = [:]
    public private(set) var accounts: Set<String> = []

    /// Builds a directory; throws when a device id appears twice or an id is empty.
    public init(_ list: [Entry], accounts: [String] = []) throws(BrokerError) {
        for account in accounts + list.map(\.account) {
            guard !account.isEmpty else { throw .config("an account has an empty id") }
            self.accounts.insert(account)
        }
        for entry in list {
            guard !entry.device.isEmpty else { throw .config("account \"\(entry.account)\" has a device with no id") }
            guard !entry.token.isEmpty else { throw .config("device \"\(entry.device)\" has an empty token") }
            guard entries[entry.device] == nil else {
                throw .config("device \"\(entry.device)\" is declared twice")
            }
            entries[entry.device] = entry
        }
    }

    public subscript(device: String) -> Entry? { entries[device] }

    /// Reads the accounts file (LabKit's reader, shared with the server: JSON5, errors name the file and key).
    public static func load(path: String) throws(BrokerError) -> AccountDirectory {
        do {
            return try directory(of: AccountsFile.load(path: path))
        } catch {
            throw .config("\(error)")
        }
    }

    /// Parses the accounts file's text; `source` names it in errors.
    public static func parse(_ data: Data, source: String) throws(BrokerError) -> AccountDirectory {
        do {
            return try directory(of: AccountsFile.parse(data, path: source))
        } catch {
            throw .config("\(error)")
        }
    }

    private static func directory(of file: AccountsFile) throws(BrokerError) -> AccountDirectory {
        var list: [Entry] = []
        for account in file.accounts {
            for device in account.devices {
                list.append(Entry(device: device.id, account: account.id, platform: device.platform,
                                  token: device.token))
            }
        }
        return try AccountDirectory(list, accounts: file.accounts.map(\.id))
    }
}
