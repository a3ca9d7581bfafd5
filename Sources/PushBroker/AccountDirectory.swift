import Foundation
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

        public init(device: String, account: String, platform: Platform, token: String) {
            self.device = device
            self.account = account
            self.platform = platform
            self.token = token
        }
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

    /// Reads the accounts file (JSON, comments allowed).
    public static func load(path: String) throws(BrokerError) -> AccountDirectory {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .config("cannot read accounts file \(path): \(error.localizedDescription)")
        }
        return try parse(data, source: path)
    }

    /// Parses the accounts file's text; `source` names it in errors.
    public static func parse(_ data: Data, source: String) throws(BrokerError) -> AccountDirectory {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let file: AccountsFile
        do {
            file = try decoder.decode(AccountsFile.self, from: data)
        } catch let error as DecodingError {
            throw .config("\(source): \(describe(error)); expected {\"accounts\": [{\"id\", \"devices\": "
                + "[{\"id\", \"platform\", \"token\"}]}]}")
        } catch {
            throw .config("\(source): \(error)")
        }
        var list: [Entry] = []
        for account in file.accounts {
            for device in account.devices {
                list.append(Entry(device: device.id, account: account.id, platform: device.platform,
                                  token: device.token))
            }
        }
        do {
            return try AccountDirectory(list, accounts: file.accounts.map(\.id))
        } catch {
            throw .config("\(source): \(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\" at \(path(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context.codingPath))"
        @unknown default: return "\(error)"
        }
    }
}

/// The accounts file as written by the launcher.
private struct AccountsFile: Decodable {
    struct Account: Decodable {
        var id: String
        var devices: [Device]
    }

    struct Device: Decodable {
        var id: String
        var platform: Platform
        var token: String
    }

    var accounts: [Account]
}
