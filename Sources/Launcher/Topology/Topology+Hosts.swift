import Foundation

/// One machine a run may place roles on (`hosts: { NAME: {…} }`, docs/HOSTS.md): reached with the system's ssh as
/// `user@address:port` with `identity` (a private key file), its host key checked against `knownHosts` (or ssh's
/// own known_hosts). `directory` is where the run's files go on it.
public struct HostSpec: Sendable, Equatable {
    public var name: String
    public var user: String
    public var address: String
    public var port: Int
    public var identity: String
    public var knownHosts: String?
    public var directory: String
    /// The line of its entry, for errors found later (an unreachable address, a wrong key).
    public var line: Int
}

/// Where each role runs. Empty `hosts`: everything on `local`, today's behaviour, unchanged.
public struct Placement: Sendable {
    public var hosts: [HostSpec] = []
    /// Role (server, broker, a device id, pool-N) → host name; a role not named here is on `local`.
    public var hostOf: [String: String] = [:]
    /// The pools' hosts, in turn: pool-N runs on `poolHosts[(N - 1) % count]`.
    public var poolHosts: [String] = []
    /// The topology file, for errors found when the run starts (an unreachable host).
    public var file = ""
    /// `hosts.local.address`: where the hosts reach this machine's processes, in a run that mixes `local` with hosts.
    public var localAddress: String?

    public static let local = "local"

    public var isLocal: Bool { hostOf.values.allSatisfy { $0 == Self.local } }

    public func host(named name: String) -> HostSpec? { hosts.first { $0.name == name } }

    /// The host of a process of the run (a pooled device's process is its pool).
    public func host(of process: String) -> String {
        if process.hasPrefix("pool-"), let n = Int(process.dropFirst(5)), !poolHosts.isEmpty {
            return poolHosts[(n - 1) % poolHosts.count]
        }
        return hostOf[process] ?? Self.local
    }
}

extension Topology {
    /// `hosts`, then the `host` of the server, the broker, each account and device, and `poolHosts`. A host named
    /// but not declared fails naming the key; a run mixing `local` and hosts is refused (not supported yet).
    static func readPlacement(_ r: NodeReader, topology t: Topology) throws(TopologyError) -> Placement {
        var placement = Placement()
        placement.file = r.file
        if let h = try r.object("hosts") {
            guard case .object(let pairs) = h.node.value else { throw h.fail("expected an object") }
            for pair in pairs {
                let entry = NodeReader(file: r.file, node: pair.node, path: h.child(pair.key))
                // `local` is the launcher's own machine, reached without ssh: only its address can be given.
                if pair.key == Placement.local {
                    try entry.onlyKeys(["address"])
                    let address = try entry.requiredString("address")
                    guard address.allSatisfy({ $0.isNumber || $0 == "." }), address.split(separator: ".").count == 4
                    else {
                        throw entry.fail("expected an IPv4 address", at: entry.node["address"],
                                         key: entry.child("address"))
                    }
                    placement.localAddress = address
                    continue
                }
                try checkHostName(pair.key, entry)
                try entry.onlyKeys(["user", "address", "port", "identity", "knownHosts", "directory"])
                let identity = try entry.requiredString("identity")
                placement.hosts.append(HostSpec(
                    name: pair.key, user: try entry.string("user") ?? "root",
                    address: try entry.requiredString("address"), port: try entry.int("port", in: 1...65_535) ?? 22,
                    identity: identity, knownHosts: try entry.string("knownHosts"),
                    directory: try entry.string("directory") ?? "/tmp", line: pair.node.line))
                for key in ["address", "user", "identity", "knownHosts", "directory"] {
                    if let value = try entry.string(key), value.contains(where: { $0 == "'" || $0.isNewline }) {
                        throw entry.fail("must not hold a quote or a line break", at: entry.node[key],
                                         key: entry.child(key))
                    }
                }
            }
        }
        // No nested throwing function mutating `placement`: a static one returns the host to record.
        if let s = try r.object("server"), let host = try hostKey(s, placement) { placement.hostOf["server"] = host }
        if let b = try r.object("broker"), let host = try hostKey(b, placement) { placement.hostOf["broker"] = host }
        for (index, account) in (try r.array("accounts") ?? []).enumerated() {
            let devices = index < t.accounts.count ? t.accounts[index].devices : []
            let accountHost = try hostKey(account, placement)
            for device in devices { if let accountHost { placement.hostOf[device.id] = accountHost } }
            // Each entry made one device, or `generate` of them, in order: the entry's `host` places those.
            var next = 0
            for d in try account.array("devices") ?? [] {
                let count = d.node["generate"] != nil ? (try d.int("generate", in: 1...10_000) ?? 1) : 1
                let made = devices[min(next, devices.count)..<min(next + count, devices.count)]
                next += count
                if let host = try hostKey(d, placement) {
                    for device in made { placement.hostOf[device.id] = host }
                }
            }
        }
        if let hosts = try r.stringList("poolHosts") {
            guard t.pools > 0 else { throw r.fail("needs \"pools\" (N pool processes to place)", key: "poolHosts") }
            for name in hosts where name != Placement.local && placement.host(named: name) == nil {
                throw r.fail("unknown host \"\(name)\"; declared in \"hosts\": "
                    + ([Placement.local] + placement.hosts.map(\.name)).joined(separator: ", "),
                    at: r.node["poolHosts"], key: "poolHosts")
            }
            placement.poolHosts = hosts
        }
        let used = Set(t.processNames.map { placement.host(of: $0) })
        if used.contains(Placement.local) && used.count > 1 && placement.localAddress == nil {
            throw r.fail("places some processes on hosts and others on \"local\": declare local: { address: \"…\" }, "
                + "the address the hosts reach this machine at (docs/HOSTS.md)", at: r.node["hosts"], key: "hosts")
        }
        if used != [Placement.local] && t.transport != .tcp {
            throw r.fail("processes on hosts talk over tcp: set transport: \"tcp\"", at: r.node["transport"],
                         key: "transport")
        }
        try checkPartitions(t, placement, file: r.file)
        try checkPartitionNemesis(t, placement, file: r.file)
        return placement
    }

    /// The `host` of a block, checked against the declared hosts; nil when the block has none.
    private static func hostKey(_ reader: NodeReader, _ placement: Placement) throws(TopologyError) -> String? {
        guard let name = try reader.string("host") else { return nil }
        guard name == Placement.local || placement.host(named: name) != nil else {
            throw reader.fail("unknown host \"\(name)\"; declared in \"hosts\": "
                + ([Placement.local] + placement.hosts.map(\.name)).joined(separator: ", "),
                at: reader.node["host"], key: reader.child("host"))
        }
        return name
    }

    /// Every process a run starts: the server, the broker, then each unpooled device or each pool.
    var processNames: [String] {
        ["server", "broker"] + (pools > 0 ? (1...pools).map { "pool-\($0)" } : devices.map(\.id))
    }

    private static func checkHostName(_ name: String, _ r: NodeReader) throws(TopologyError) {
        guard !name.isEmpty, name.count <= 32,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { throw r.fail("a host name is 1-32 letters, digits, - or _; got \"\(name)\"") }
    }
}

extension NodeReader {
    /// The same block without `key` (the `host` of the server's and broker's blocks, read by `readPlacement`,
    /// is not a knob of theirs).
    func without(_ key: String) -> NodeReader {
        guard case .object(let pairs) = node.value else { return self }
        return NodeReader(file: file, node: JSON5Node(value: .object(pairs.filter { $0.key != key }), line: node.line),
                          path: path)
    }
}

extension Topology {
    /// A `partition` step's `halves`: two non-empty lists of process names (server, broker, a device id, pool-N) or
    /// host names; which hosts they are is checked with the `hosts` block (`checkPartitions`).
    static func readHalves(_ s: NodeReader, topology t: Topology) throws(TopologyError) -> [[String]] {
        guard let halves = try s.array("halves"), halves.count == 2 else {
            throw s.fail("needs \"halves\": two lists of process or host names, e.g. [[\"server\"], [\"broker\"]]")
        }
        var out: [[String]] = []
        for half in halves {
            guard case .array(let items) = half.node.value, !items.isEmpty else {
                throw half.fail("expected a non-empty list of process or host names")
            }
            var names: [String] = []
            for item in items {
                guard case .string(let name) = item.value, !name.isEmpty else {
                    throw half.fail("expected a process or host name, got \(item.typeName)", at: item)
                }
                names.append(name)
            }
            out.append(names)
        }
        return out
    }

    /// Every `partition` step cuts hosts the run uses: each name is a process or a declared host, and the halves
    /// share no host (processes on one host cannot be cut from each other by its network).
    static func checkPartitions(_ t: Topology, _ placement: Placement, file: String) throws(TopologyError) {
        for (index, step) in t.scenario.enumerated() {
            guard case .network("partition", let cut) = step.action else { continue }
            let halves = cut.halves
            let key = "scenario[\(index)].halves"
            guard !placement.hosts.isEmpty else {
                throw TopologyError(file: file, line: step.line, key: key,
                                    message: "a partition needs processes on hosts (a \"hosts\" block, docs/HOSTS.md)")
            }
            // Plain loops: typed throws out of nested closures passed to `map` crashed this compiler's output.
            var sides: [Set<String>] = []
            for half in halves {
                var side: Set<String> = []
                for name in half {
                    if placement.host(named: name) != nil {
                        side.insert(name)
                        continue
                    }
                    guard t.processNames.contains(name) || t.poolAssignment[name] != nil || t.account(of: name) != nil
                    else {
                        throw TopologyError(file: file, line: step.line, key: key,
                                            message: "\"\(name)\" is neither a process nor a host of this topology")
                    }
                    let host = placement.host(of: t.poolAssignment[name] ?? name)
                    // Never a rule on the launcher's own machine: its network is not the run's to cut.
                    guard host != Placement.local else {
                        throw TopologyError(file: file, line: step.line, key: key,
                                            message: "\"\(name)\" runs on local: a partition cuts between hosts")
                    }
                    side.insert(host)
                }
                sides.append(side)
            }
            let shared = sides[0].intersection(sides[1])
            guard shared.isEmpty else {
                throw TopologyError(file: file, line: step.line, key: key, message: "both halves are on host "
                    + "\(shared.sorted().joined(separator: ", ")): a partition cuts between hosts")
            }
        }
    }
}
