import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// The CURVE keys of one run (docs/SECURITY.md): a key pair per process and per device plus the launcher's, made
/// with `zmq_curve_keypair` when the run starts and written to `keys/` in the run folder (secret keys mode 0600,
/// the folder 0700). Processes get key FILE paths on their command lines, never a key.
package struct RunKeys {
    let directory: String
    package private(set) var pairs: [String: CurveKeyPair] = [:]

    package init(directory: String) {
        self.directory = directory
    }

    /// Makes and writes the key pair of `name` (once).
    @discardableResult
    package mutating func make(_ name: String) throws -> CurveKeyPair {
        if let pair = pairs[name] { return pair }
        let pair = try CurveKeyPair.generate()
        try pair.write(to: directory, name: name)
        pairs[name] = pair
        return pair
    }

    package func secretFile(_ name: String) -> String { "\(directory)/\(name).secret" }
    package func publicFile(_ name: String) -> String { "\(directory)/\(name).public" }

    /// `topology` with every device's token drawn from the system's generator (128 bits), never from the topology's
    /// seed: two runs of one topology share no token. (The simulation keeps the seeded tokens: they reach no real
    /// socket and its replay must stay byte-identical.)
    static func withSystemTokens(_ topology: Topology) -> Topology {
        var topology = topology
        var generator = SystemRandomNumberGenerator()
        for a in topology.accounts.indices {
            for d in topology.accounts[a].devices.indices {
                let high = generator.next() as UInt64, low = generator.next() as UInt64
                topology.accounts[a].devices[d].token = "t-" + hex(high) + hex(low)
            }
        }
        return topology
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The run's accounts file with each device's public key beside its token, and each pool's key with the devices
    /// (`poolOf`: pooled device → pool) that key may speak for over the pool's one broker connection.
    static func writeAccounts(_ topology: Topology, keys: RunKeys, poolOf: [String: String] = [:],
                              to path: String) throws {
        var fields: [(String, JSONValue)] = [("accounts", .array(topology.accounts.map { account in
            .object([("id", .string(account.id)), ("devices", .array(account.devices.map { device in
                .object([("id", .string(device.id)), ("platform", .string(device.platform.rawValue)),
                         ("token", .string(device.token)),
                         ("publicKey", .string(keys.pairs[device.id]?.publicKey ?? ""))])
            }))])
        }))]
        let pools = Set(poolOf.values).sorted().compactMap { pool -> JSONValue? in
            guard let key = keys.pairs[pool]?.publicKey else { return nil }
            let members = topology.devices.map(\.id).filter { poolOf[$0] == pool }
            return .object([("id", .string(pool)), ("publicKey", .string(key)),
                            ("devices", .array(members.map { .string($0) }))])
        }
        if !pools.isEmpty { fields.append(("pools", .array(pools))) }
        let accounts: JSONValue = .object(fields)
        guard FileManager.default.createFile(atPath: path, contents: Data((accounts.description + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600])
        else { throw LabError.io("cannot write \(path)") }
    }

    /// A secret-only file (mode 0600), e.g. a device's token, so it need not be on a command line.
    static func writeSecret(_ path: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw LabError.io("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array((text + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw LabError.io("cannot write \(path)") }
        return path
    }

    static let spec = CommandSpec(
        name: "synclab keys",
        summary: "make CURVE key pairs for starting processes by hand (docs/SECURITY.md)",
        usage: "synclab keys --out DIR NAME…",
        flags: [Flag("out", value: "DIR", help: "where to write NAME.secret (mode 0600) and NAME.public (required)")],
        footer: """
            Example (a server, a broker, the launcher's key for control, one device):
              synclab keys --out keys server broker launcher pixel
            then put keys/pixel.public's text in the accounts file as the device's "publicKey" and give each
            process its --key-file keys/NAME.secret and the public key files of its peers (README, "By hand").
            """)

    /// `synclab keys --out DIR NAME…`: exit 0 when every pair was written, 2 for a bad command line, 1 otherwise.
    static func command(_ arguments: [String]) -> Int32 {
        let options = spec.parseOrExit(arguments)
        guard let out = options.string("out"), !options.positional.isEmpty else {
            Output.stderr("synclab keys: need --out DIR and at least one NAME\n\n" + spec.help)
            return 2
        }
        var keys = RunKeys(directory: out)
        for name in options.positional {
            guard !name.isEmpty, !name.contains("/") else {
                Output.stderr("synclab keys: \"\(name)\" is not a file name\n")
                return 2
            }
            do {
                let pair = try keys.make(name)
                Output.stdout("\(name) \(pair.publicKey)  \(keys.secretFile(name))  \(keys.publicFile(name))\n")
            } catch {
                Output.stderr("synclab keys: \(name): \(error)\n")
                return 1
            }
        }
        return 0
    }
}
