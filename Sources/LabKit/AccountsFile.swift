import Foundation
import SyncProtocol

/// The run's accounts file (docs/ARCHITECTURE.md): accounts, each with its devices, platforms and tokens. The
/// server and the broker both read it with this one reader, so both refuse the same files with the same words.
/// Read with JSON5 allowed so hand-written files may carry comments; keys nobody uses are ignored.
public struct AccountsFile: Codable, Sendable, Equatable {
    public struct Account: Codable, Sendable, Equatable {
        public var id: String
        public var devices: [Device]

        public init(id: String, devices: [Device]) {
            self.id = id
            self.devices = devices
        }
    }

    public struct Device: Codable, Sendable, Equatable {
        public var id: String
        public var platform: Platform
        public var token: String
        /// The device's CURVE public key (40 characters of Z85): the server and the broker admit a connection only
        /// with a key named here, and bind it to this device. Optional so a file for a run without CURVE needs none.
        public var publicKey: String?

        public init(id: String, platform: Platform, token: String, publicKey: String? = nil) {
            self.id = id
            self.platform = platform
            self.token = token
            self.publicKey = publicKey
        }
    }

    /// A device pool's own CURVE key and the devices it may speak for over its one multiplexed broker connection
    /// (docs/PROTOCOL.md, "Pooled links"). The launcher writes one per pool when the run has keys.
    public struct Pool: Codable, Sendable, Equatable {
        public var id: String
        public var publicKey: String
        public var devices: [String]

        public init(id: String, publicKey: String, devices: [String]) {
            self.id = id
            self.publicKey = publicKey
            self.devices = devices
        }
    }

    public var accounts: [Account]
    /// Optional: a file without pools (every hand-written one so far) means no key speaks for more than one device.
    public var pools: [Pool]?

    public init(accounts: [Account], pools: [Pool]? = nil) {
        self.accounts = accounts
        self.pools = pools
    }

    /// Pool id of every pool key: admitted by the broker's ZAP handler beside the devices' keys.
    public var poolsByPublicKey: [String: String] {
        var out: [String: String] = [:]
        for pool in pools ?? [] { out[pool.publicKey] = pool.id }
        return out
    }

    /// The devices each pool (by id) may speak for: a multiplexed frame naming any other device is refused.
    public var poolMembers: [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for pool in pools ?? [] { out[pool.id] = Set(pool.devices) }
        return out
    }

    /// Device id of every public key the file names: what a ZAP handler admits.
    public var devicesByPublicKey: [String: String] {
        var out: [String: String] = [:]
        for account in accounts {
            for device in account.devices { if let key = device.publicKey { out[key] = device.id } }
        }
        return out
    }

    /// Reads and checks the file at `path`; errors name the file and the key that is wrong.
    public static func load(path: String) throws(AccountsFileError) -> AccountsFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            // FileManager does not say why; errno from a plain open does ("No such file or directory").
            let fd = open(path, O_RDONLY)
            let reason = fd < 0 ? String(cString: strerror(errno)) : "unreadable"
            if fd >= 0 { close(fd) }
            throw AccountsFileError(path: path, key: "", problem: "cannot read the accounts file: \(reason)")
        }
        return try parse(data, path: path)
    }

    /// Parses and checks the file's bytes; `path` only names the file in errors.
    public static func parse(_ data: Data, path: String) throws(AccountsFileError) -> AccountsFile {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let file: AccountsFile
        do {
            file = try decoder.decode(AccountsFile.self, from: data)
        } catch let error as DecodingError {
            throw translate(error, path: path)
        } catch {
            throw AccountsFileError(path: path, key: "", problem: "\(error)")
        }
        try file.check(path: path)
        return file
    }

    private func check(path: String) throws(AccountsFileError) {
        var accountIDs: Set<String> = []
        var deviceIDs: Set<String> = []
        var publicKeys: Set<String> = []
        for (a, account) in accounts.enumerated() {
            try Self.checkID(account.id, path: path, key: "accounts[\(a)].id")
            guard accountIDs.insert(account.id).inserted else {
                throw AccountsFileError(path: path, key: "accounts[\(a)].id",
                                problem: "account \"\(account.id)\" appears twice")
            }
            for (d, device) in account.devices.enumerated() {
                let key = "accounts[\(a)].devices[\(d)]"
                try Self.checkID(device.id, path: path, key: key + ".id")
                try Self.checkID(device.token, path: path, key: key + ".token")
                if let publicKey = device.publicKey {
                    guard publicKey.utf8.count == 40 else {
                        throw AccountsFileError(path: path, key: key + ".publicKey",
                                                problem: "must be a CURVE public key: 40 characters of Z85")
                    }
                    guard publicKeys.insert(publicKey).inserted else {
                        throw AccountsFileError(path: path, key: key + ".publicKey",
                                                problem: "is the key of another device too")
                    }
                }
                guard deviceIDs.insert(device.id).inserted else {
                    throw AccountsFileError(path: path, key: key + ".id",
                        problem: "device \"\(device.id)\" appears twice")
                }
            }
        }
        try checkPools(path: path, deviceIDs: deviceIDs, publicKeys: publicKeys)
    }

    /// A pool's id is no device's (the ZAP user id tells the two apart), its key is nobody else's, and each of its
    /// devices exists and belongs to this pool only.
    private func checkPools(path: String, deviceIDs: Set<String>, publicKeys: Set<String>) throws(AccountsFileError) {
        var poolIDs: Set<String> = []
        var keys = publicKeys
        var pooled: Set<String> = []
        for (p, pool) in (pools ?? []).enumerated() {
            let key = "pools[\(p)]"
            try Self.checkID(pool.id, path: path, key: key + ".id")
            guard !deviceIDs.contains(pool.id), poolIDs.insert(pool.id).inserted else {
                throw AccountsFileError(path: path, key: key + ".id",
                                        problem: "\"\(pool.id)\" is already a device's or another pool's id")
            }
            guard pool.publicKey.utf8.count == 40 else {
                throw AccountsFileError(path: path, key: key + ".publicKey",
                                        problem: "must be a CURVE public key: 40 characters of Z85")
            }
            guard keys.insert(pool.publicKey).inserted else {
                throw AccountsFileError(path: path, key: key + ".publicKey",
                                        problem: "is the key of another device too")
            }
            for (d, device) in pool.devices.enumerated() {
                guard deviceIDs.contains(device) else {
                    throw AccountsFileError(path: path, key: key + ".devices[\(d)]",
                                            problem: "\"\(device)\" is no device of the file")
                }
                guard pooled.insert(device).inserted else {
                    throw AccountsFileError(path: path, key: key + ".devices[\(d)]",
                                            problem: "\"\(device)\" is in another pool too")
                }
            }
        }
    }

    private static func checkID(_ value: String, path: String, key: String) throws(AccountsFileError) {
        if value.isEmpty { throw AccountsFileError(path: path, key: key, problem: "is empty") }
        if value.utf8.count > Limits.maxIDBytes {
            throw AccountsFileError(path: path, key: key, problem: "is longer than \(Limits.maxIDBytes) bytes")
        }
    }

    private static func translate(_ error: DecodingError, path: String) -> AccountsFileError {
        func joined(_ codingPath: [CodingKey]) -> String { Codec.codingPathText(codingPath) }
        switch error {
        case .keyNotFound(let key, let context):
            return AccountsFileError(path: path, key: joined(context.codingPath + [key]), problem: "is missing")
        case .typeMismatch(let type, let context):
            return AccountsFileError(path: path, key: joined(context.codingPath), problem: "must be \(describe(type))")
        case .valueNotFound(let type, let context):
            return AccountsFileError(path: path, key: joined(context.codingPath),
                             problem: "must be \(describe(type)), not null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = context.underlyingError.map { "\($0.localizedDescription)" } ?? context.debugDescription
                return AccountsFileError(path: path, key: "", problem: "not JSON: \(detail)")
            }
            let allowed = Platform.allCases.map(\.rawValue).joined(separator: ", ")
            let last = context.codingPath.last?.stringValue
            let problem = last == "platform" ? "must be one of \(allowed)" : "has an invalid value"
            return AccountsFileError(path: path, key: joined(context.codingPath), problem: problem)
        @unknown default:
            return AccountsFileError(path: path, key: "", problem: "\(error)")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Platform.Type: return "a string (\(Platform.allCases.map(\.rawValue).joined(separator: ", ")))"
        default:
            let name = "\(type)"
            return name.hasPrefix("Array") ? "an array" : name.hasPrefix("Dictionary") ? "an object" : name
        }
    }
}

/// What is wrong with an accounts file: the file, the key (empty when the whole file is at fault) and the problem.
public struct AccountsFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var key: String
    public var problem: String

    public init(path: String, key: String, problem: String) {
        self.path = path
        self.key = key
        self.problem = problem
    }

    public var description: String { key.isEmpty ? "\(path): \(problem)" : "\(path): \(key): \(problem)" }
}
