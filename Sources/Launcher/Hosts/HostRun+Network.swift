import Foundation
import LabKit
import SyncProtocol

/// A real network partition between hosts, as on real machines: iptables rules in a chain of the lab's own
/// (`SYNCLAB`, jumped to from INPUT and OUTPUT) on each host of either half, dropping every packet from and to the
/// other half's addresses. The launcher's own logins (from its address, in neither half) still pass, so it keeps
/// control of every process. `heal` flushes the chain; the end of the run removes it.
extension HostRun {
    static let chain = "SYNCLAB"

    /// The hosts a half names: host names as they are, a process (or a pooled device, through its pool) by its host.
    func hosts(of half: [String]) -> [String] {
        Array(Set(half.map { placement.host(named: $0) != nil ? $0 : placement.host(of: poolOf[$0] ?? $0) })).sorted()
    }

    /// Cuts `halves[0]` from `halves[1]`; the fields of its `network.partitioned` event.
    func partition(_ halves: [[String]], processes: [String]) throws -> [(String, JSONValue)] {
        let sides = halves.map(hosts(of:))
        var commands: [(String, String)] = []
        for (mine, theirs) in [(sides[0], sides[1]), (sides[1], sides[0])] {
            for name in mine {
                var command = "iptables -w -N \(Self.chain) 2>/dev/null; "
                for hook in ["INPUT", "OUTPUT"] {
                    command += "iptables -w -C \(hook) -j \(Self.chain) 2>/dev/null || "
                        + "iptables -w -I \(hook) -j \(Self.chain) || exit 1; "
                }
                for other in theirs {
                    let address = placement.host(named: other)!.address
                    command += "iptables -w -A \(Self.chain) -s \(shellQuote(address)) -j DROP && "
                        + "iptables -w -A \(Self.chain) -d \(shellQuote(address)) -j DROP || exit 1; "
                }
                commands.append((name, command))
            }
        }
        // Every host at once: a step costs one ssh login, not one per host.
        let answers = onEveryHost(commands)
        cut.formUnion(commands.map(\.0))
        if let failed = answers.first(where: { $0.status != 0 }) {
            throw LabError.io("partition: iptables on \(failed.host) failed: \(failed.err)")
        }
        let line = "\(sides[0].joined(separator: ",")) | \(sides[1].joined(separator: ","))"
        recordPartition(line)
        return [("halves", .array(halves.map { .array($0.map { .string($0) }) })),
                ("hosts", .array(sides.map { .array($0.map { .string($0) }) }))]
    }

    /// Ends every partition (the chain flushed on every host that has one); the fields of `network.healed`.
    func heal() throws -> [(String, JSONValue)] {
        let healed = cut.sorted()
        let answers = onEveryHost(healed.map { ($0, "iptables -w -F \(Self.chain)") })
        if let failed = answers.first(where: { $0.status != 0 }) {
            throw LabError.io("heal: iptables on \(failed.host) failed: \(failed.err)")
        }
        cut.removeAll()
        return [("hosts", .array(healed.map { .string($0) }))]
    }

    /// Runs each (host, command) over ssh, all at once; their answers in the same order.
    func onEveryHost(_ commands: [(String, String)]) -> [(host: String, status: Int32, err: String)] {
        let answers = Answers(commands.count)
        let specs = commands.map { (placement.host(named: $0.0)!, $0.1) }
        DispatchQueue.concurrentPerform(iterations: specs.count) { index in
            let done = SSH(host: specs[index].0).run(specs[index].1, timeout: 20)
            answers.set(index, (specs[index].0.name, done.status, done.err))
        }
        return answers.all
    }

    /// Removes the chain and its jumps from every host that ever had one (the end of the run).
    func removeChains() {
        var command = ""
        for hook in ["INPUT", "OUTPUT"] { command += "iptables -w -D \(hook) -j \(Self.chain) 2>/dev/null; " }
        command += "iptables -w -F \(Self.chain) 2>/dev/null; iptables -w -X \(Self.chain) 2>/dev/null; true"
        _ = onEveryHost(everCut.sorted().map { ($0, command) })
    }
}

/// The answers of commands run at once on several hosts, each written by its own thread under a lock.
final class Answers: @unchecked Sendable {
    private var values: [(host: String, status: Int32, err: String)]
    private let lock = NSLock()
    init(_ count: Int) { values = Array(repeating: ("", -1, ""), count: count) }
    func set(_ index: Int, _ value: (host: String, status: Int32, err: String)) {
        lock.lock()
        values[index] = value
        lock.unlock()
    }
    var all: [(host: String, status: Int32, err: String)] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}
