import Foundation
import LabTestSupport
import SyncProtocol
import Testing

/// Faults on the hosts bed (docs/HOSTS.md): a partition nemesis, a role SIGKILLed and a crash point on a remote host,
/// and an ssh connection lost mid-run. In `HostsEndToEndTests`' suite, so they share its serialized bed.
extension HostsEndToEndTests {
    /// The events of a run folder of type `type`.
    static func events(_ home: TempFolder, _ type: String) -> [JSONValue] {
        home.text("run/events.jsonl").split(separator: "\n").filter { $0.contains("\"type\":\"\(type)\"") }
            .compactMap { try? JSONValue.parse(String($0)) }
    }

    /// Half the devices (h3) cut from the server and the broker by a real partition while both halves edit: h3's
    /// edits are saved on the device and reach the server only after the heal, and every replica converges.
    @Test(.enabled(if: isRoot, skipped))
    func devicesCutFromTheServerSaveTheirEditsAndConvergeAfterTheHeal() throws {
        try Bed.withFolder(4) { home in
            let run = try Bed.run("partition-half-devices", in: home, limit: 240)
            #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
            for check in ["no-lost-edit", "exactly-once", "convergence", "read-your-writes"] {
                #expect(run.invariant(check).held, "\(check): \(run.invariant(check).detail)")
            }
            // The heal begins at its step's time; `network.healed` is written once every host's rules are gone, and
            // what TCP held flows as soon as the first is, so the step's time is the bound.
            let healed = try #require(Self.events(home, "network.healed").first?["wall"]?.intValue)
            let healAt = try #require(Self.events(home, "scenario.action").first {
                $0["action"]?.stringValue == "heal"
            }?["at"]?.doubleValue)
            let cut = try #require(Self.events(home, "network.partitioned").first?["wall"]?.intValue)
            // The edits h3's devices (pixel, galaxy) saved during the cut were applied only after the heal.
            let saved = Self.events(home, "op.saved").filter {
                let wall = $0["wall"]?.intValue ?? 0
                return ["pixel", "galaxy"].contains($0["proc"]?.stringValue ?? "") && wall > cut && wall < healed
            }.compactMap { $0["key"]?.stringValue }
            #expect(saved.count == 2, "h3's edits during the partition: \(saved)")
            let applied = Self.events(home, "op.applied").filter { saved.contains($0["key"]?.stringValue ?? "") }
            #expect(applied.count == saved.count, "\(applied)")
            #expect(applied.allSatisfy { ($0["sim"]?.doubleValue ?? 0) >= healAt },
                    "applied before the heal: \(applied)")
        }
    }

    @Test(.enabled(if: isRoot, skipped))
    func aPartitionNemesisAKillAndACrashPointOnHostsAreSurvivedWithTheVerdictUnchanged() throws {
        try Bed.withFolder(3) { home in
            let run = try Bed.run("nemesis", in: home, limit: 240)
            run.expectPassed()
            // The nemesis drew its cuts from the seed and each was carried out on the hosts, then healed.
            let cuts = Self.events(home, "network.partitioned")
            #expect(cuts.count == 3, "\(cuts)")
            #expect(Self.events(home, "network.healed").count >= 3)
            let steps = Self.events(home, "scenario.action").filter { $0["nemesis"]?.stringValue == "partition" }
            #expect(steps.count == 3 && Self.events(home, "scenario.failed").isEmpty, "\(steps)")
            let nemesis = run.report["nemesis"] ?? .null
            #expect(nemesis["byKind"]?["partition"]?["total"]?.intValue == 3, "\(nemesis)")
            // The broker on h2 was SIGKILLed over ssh and restarted; the server on h1 died at its crash point (read
            // from its events file on h1) and was restarted.
            let killed = Self.events(home, "process.killed")
            #expect(killed.contains { $0["target"]?.stringValue == "broker" && $0["by"] == nil }, "\(killed)")
            #expect(killed.contains { $0["target"]?.stringValue == "server"
                && $0["point"]?.stringValue == "server.after-commit-before-reply" }, "\(killed)")
            let restarted = Self.events(home, "process.restarted").compactMap { $0["target"]?.stringValue }
            #expect(restarted.contains("broker") && restarted.contains("server"), "\(restarted)")
            #expect(home.text("run/events/server.jsonl").contains("\"process.crashing\""))
            // Each partition is a band on the timeline; each host says how its events were merged.
            #expect(home.text("run/report.html").components(separatedBy: "band band-partition").count - 1 == 3)
            let hosts = try JSONValue.parse(home.text("run/hosts.json"))
            for host in hosts["hosts"]?.arrayValue ?? [] { #expect(host["merge"]?["applied"] != nil, "\(host)") }
            #expect(home.text("run/report.md").contains("| events merged |"))
            #expect(Bed.processesOnHosts(3).isEmpty, "\(Bed.processesOnHosts(3))")
        }
    }

    /// The connection holding the broker is cut mid-run (its sshd session on h2 killed, as a dropped link would):
    /// the run stops, every process on every host is stopped, and the report says which host and process. The
    /// laptop runs on the launcher's own machine (`local`, reached by the hosts at the bed's root address): a run
    /// may mix the two, and its local process is stopped too.
    @Test(.enabled(if: isRoot, skipped))
    func anSSHFailureMidRunStopsEveryProcessOnEveryHostAndTheReportSaysWhere() throws {
        try Bed.withFolder(3) { home in
            let topology = try Bed.topology("quickstart", in: home) {
                $0.replacingOccurrences(of: "hosts: {",
                                        with: "hosts: {\n    local: { address: \"\(Bed.subnet).1\" },")
                    .replacingOccurrences(of: "platform: \"web\",     start: \"foreground\" }",
                                          with: "platform: \"web\", start: \"foreground\", host: \"local\" }")
            }
            let launcher = try ChildProcess(try Binaries.path("synclab"),
                                            ["run", topology, "--out", home.file("run"), "--bin",
                                             EndToEndTests.binDirectory], log: home.file("synclab.log"))
            defer { launcher.killNow() }
            // Once the scenario plays, every role runs: cut the broker's connection.
            var session: Int32?
            for _ in 0..<600 where session == nil {
                if home.text("run/events/launcher.jsonl").contains("\"name\":\"scenario\"") {
                    session = Bed.sshSession(holding: "bin/synclab-broker", onHost: 2)
                }
                if session == nil { usleep(100_000) }
            }
            let cut = try #require(session, "the broker never ran on h2: \(launcher.log)")
            // The laptop runs here, bound on the bed's root address.
            let laptop = EndToEndTests.processCommandLines().filter {
                $0.contains(home.file("run")) && $0.contains("laptop")
            }
            #expect(laptop.contains { $0.contains("\(Bed.subnet).1:") }, "\(laptop)")
            kill(cut, SIGKILL)
            let end = launcher.finish(within: 120, stop: SIGINT)
            #expect(end.status == 1, "\(end): \(launcher.log)")
            let output = launcher.log
            #expect(output.contains("ssh to h2 (\(Bed.subnet).12) failed mid-run while it held broker"), "\(output)")
            let report = home.text("run/report.md")
            let failed = report.components(separatedBy: "### Where the run failed").last ?? ""
            #expect(report.contains("### Where the run failed") && failed.contains("h2")
                && failed.contains("broker"), "\(report)")
            let hosts = try JSONValue.parse(home.text("run/hosts.json"))
            #expect(hosts["failures"]?.arrayValue?.first?.stringValue?.contains("held broker") == true, "\(hosts)")
            // Every process on every host stopped, and the other hosts' files came back.
            #expect(Bed.processesOnHosts(3).isEmpty, "\(Bed.processesOnHosts(3))")
            let left = EndToEndTests.processCommandLines().filter { $0.contains(home.file("run")) }
            #expect(left.isEmpty, "left behind here: \(left)")
            #expect(hosts["hosts"]?.arrayValue?.first?["name"]?.stringValue == "local", "\(hosts)")
            for file in ["events/server.jsonl", "events/pixel.jsonl", "events/laptop.jsonl", "server.sqlite"] {
                #expect(FileManager.default.fileExists(atPath: home.file("run/\(file)")), "missing \(file)")
            }
        }
    }
}

extension HostsEndToEndTests.Bed {
    /// The sshd session process on host `index` whose shell runs the role `executable` (its grandparent: sshd's
    /// session → the role's shell → the role), or nil.
    static func sshSession(holding executable: String, onHost index: Int) -> Int32? {
        let pids = ((try? ChildProcess.run("/usr/sbin/ip", ["netns", "pids", "\(prefix)-\(index)"]))?.output ?? "")
            .split(separator: "\n").compactMap { Int32($0) }
        func parent(_ pid: Int32) -> Int32? {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // After the command's closing parenthesis: state, then the parent's pid.
            guard let close = stat.lastIndex(of: ")") else { return nil }
            return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { Int32($0) }
        }
        func argv(_ pid: Int32) -> [String] {
            ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "")
                .split(separator: "\0").map(String.init)
        }
        for pid in pids where argv(pid).first?.hasSuffix(executable) == true {
            guard let shell = parent(pid), let session = parent(shell),
                  argv(session).first?.hasPrefix("sshd: root@") == true
            else { continue }
            return session
        }
        return nil
    }
}
