/// The cuts a `partition` nemesis draws from (docs/NEMESIS.md, docs/HOSTS.md). A cut is written `A,B|C`: the names
/// of one half, `|`, the names of the other, each a host or a process, as a `partition` step's `halves` takes them.
extension Topology {
    /// At most this many hosts are split every way (2^(n-1) - 1 halves); past it, only one host against the rest.
    static let partitionSplitHosts = 10

    /// The cuts `names` stand for, each once, in the order written:
    /// - `halves`: every split of the hosts the run uses into two non-empty halves;
    /// - `pairs`: one process cut from another, the server or the broker from every process on another host than
    ///   its own (devices talk to nothing else, so a cut between two devices would change nothing);
    /// - `any`: both; a host name: that host against every other; a process name (a device, a pool, server,
    ///   broker): its pairs.
    /// Empty when fewer than two hosts are used (a local run has no network of its own to cut).
    func partitionCuts(_ names: [String], placement: Placement) -> [String] {
        let processes = processNames
        let usedNames = Set(processes.map { placement.host(of: $0) })
        let used = placement.hosts.map(\.name).filter { usedNames.contains($0) }
        guard used.count >= 2 else { return [] }
        var out: [String] = []
        func add(_ cut: String) { if !out.contains(cut) { out.append(cut) } }
        func halves() {
            guard used.count <= Self.partitionSplitHosts else {
                for host in used { add(host + "|" + used.filter { $0 != host }.joined(separator: ",")) }
                return
            }
            // The first host is always in the first half, so no split comes twice with its halves swapped.
            for mask in 1..<(1 << used.count) where mask & 1 == 1 && mask != (1 << used.count) - 1 {
                let a = used.indices.filter { mask & (1 << $0) != 0 }.map { used[$0] }
                let b = used.indices.filter { mask & (1 << $0) == 0 }.map { used[$0] }
                add(a.joined(separator: ",") + "|" + b.joined(separator: ","))
            }
        }
        func pairs(with only: String?) {
            for centre in ["server", "broker"] {
                for other in processes where other != centre && (centre == "server" || other != "server") {
                    let hosts = [placement.host(of: other), placement.host(of: centre)]
                    guard hosts[0] != hosts[1], !hosts.contains(Placement.local) else { continue }
                    if let only, only != centre, only != other { continue }
                    add(centre + "|" + other)
                }
            }
        }
        for name in names {
            switch name {
            case "any":
                halves()
                pairs(with: nil)
            case "halves": halves()
            case "pairs": pairs(with: nil)
            default:
                if used.contains(name) {
                    add(name + "|" + used.filter { $0 != name }.joined(separator: ","))
                } else {
                    pairs(with: poolAssignment[name] ?? name)
                }
            }
        }
        return out
    }

    /// A cut's two halves (`A,B|C` → [[A, B], [C]]).
    static func halves(ofCut cut: String) -> [[String]] {
        cut.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.split(separator: ",").map(String.init)
        }
    }

    /// Every `partition` generator draws from at least one cut: the run uses two hosts or more, and each target
    /// names a cut. Checked once the `hosts` block is read (the generators are read before it).
    static func checkPartitionNemesis(_ t: Topology, _ placement: Placement, file: String) throws(TopologyError) {
        guard let nemesis = t.nemesis else { return }
        for (index, generator) in nemesis.generators.enumerated() where generator.kind == .partition {
            let key = (nemesis.line == 0 ? "nemesis[\(index)]" : "nemesis.generators[\(index)]") + ".targets"
            guard !t.partitionCuts(["any"], placement: placement).isEmpty else {
                throw TopologyError(file: file, line: generator.line, key: key, message: "a partition needs "
                    + "processes on at least two hosts (a \"hosts\" block and \"host\" keys, docs/HOSTS.md)")
            }
            for name in generator.targets where t.partitionCuts([name], placement: placement).isEmpty {
                throw TopologyError(file: file, line: generator.line, key: key, message: "\"\(name)\" names no "
                    + "cut: use any, halves, pairs, a host of the run, or a process on another host than the "
                    + "server's or the broker's")
            }
        }
    }
}
