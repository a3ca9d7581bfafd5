import Foundation
import LabKit
import Markup
import SyncProtocol

/// The report's part for a run on hosts (hosts.json beside the events, docs/HOSTS.md): where each process ran,
/// each host's clock offset at the start and the end with its uncertainty, what each partition did to the server's
/// notices, and where an ssh failure stopped the run. Empty for a run on this machine.
struct HostsReport {
    let hosts: [JSONValue]
    let failures: [String]
    let windows: [Window]

    /// One partition, from its `network.partitioned` to the next `network.healed` (or the run's end).
    struct Window {
        let hosts: String
        /// Notices the server sent during it, and what became of them at the broker.
        var sent = 0, receivedDuring = 0, receivedAfter = 0, never = 0
    }

    init?(_ data: RunData) {
        guard let text = try? String(contentsOfFile: data.folder.path("hosts.json"), encoding: .utf8),
              let json = try? JSONValue.parse(text)
        else { return nil }
        hosts = json["hosts"]?.arrayValue ?? []
        failures = (json["failures"]?.arrayValue ?? []).compactMap(\.stringValue)
        windows = Self.windows(data.events)
    }

    static func windows(_ events: [Event]) -> [Window] {
        var received: [String: Int64] = [:]
        for event in events where event.type == EventCatalogue.noticeReceived {
            let key = "\(event.string("account") ?? "")@\(event.int("head") ?? -1)"
            if received[key] == nil { received[key] = event.wall }
        }
        var out: [Window] = []
        var open: (window: Window, healedAt: Int64?)?
        var spans: [(start: Int64, end: Int64, window: Window)] = []
        var start: Int64 = 0
        for event in events {
            if event.type == EventCatalogue.networkPartitioned, open == nil {
                let sides = (event["hosts"]?.arrayValue ?? []).map {
                    ($0.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
                }
                open = (Window(hosts: sides.joined(separator: " | ")), nil)
                start = event.wall
            } else if event.type == EventCatalogue.networkHealed, let current = open {
                spans.append((start, event.wall, current.window))
                open = nil
            }
        }
        if let current = open { spans.append((start, Int64.max, current.window)) }
        for span in spans {
            var window = span.window
            for event in events where event.type == EventCatalogue.noticeSent && event.wall >= span.start
                && event.wall < span.end {
                window.sent += 1
                let key = "\(event.string("account") ?? "")@\(event.int("head") ?? -1)"
                switch received[key] {
                case .none: window.never += 1
                case .some(let at) where at < span.end: window.receivedDuring += 1
                case .some: window.receivedAfter += 1
                }
            }
            out.append(window)
        }
        return out
    }

    private func clock(_ host: JSONValue, _ phase: String) -> String {
        if host["name"]?.stringValue == Placement.local { return "the launcher's own" }
        guard let c = (host["clock"]?.arrayValue ?? []).first(where: { $0["phase"]?.stringValue == phase }),
              let offset = c["offsetMs"]?.doubleValue, let uncertainty = c["uncertaintyMs"]?.doubleValue
        else { return "not measured" }
        return String(format: "%+.2f ± %.2f ms", offset, uncertainty)
    }

    /// How a host's events went into `events.jsonl` (hosts.json's `merge`; absent in run folders made before it).
    static func merge(_ host: JSONValue) -> String {
        if host["name"]?.stringValue == Placement.local { return "as written" }
        guard let merge = host["merge"] else { return "on the host's own clock" }
        let shifts = (merge["shiftMs"]?.arrayValue ?? []).compactMap(\.doubleValue)
        guard merge["applied"]?.boolValue == true, !shifts.isEmpty else {
            return "as written: every offset within its uncertainty"
        }
        return "shifted by " + shifts.map { String(format: "%+.2f", -$0) }.joined(separator: " → ") + " ms"
    }

    /// The report's section: each host and its clock, each partition's notices, where a run failed.
    var blocks: [Block] {
        let hostTable = Table(["host", "address", "processes", "clock at start", "clock at end", "events merged"],
                              rows: hosts.map { host in
            let processes = (host["processes"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
            return Table.Row([host["name"]?.stringValue ?? "", host["address"]?.stringValue ?? "", processes,
                              clock(host, "start"), clock(host, "end"), Self.merge(host)].map { Table.Cell($0) })
        })
        var b: [Block] = [
            .heading("Hosts", level: 2),
            .paragraph("Each process ran on its host, started over ssh (docs/HOSTS.md). Clock offsets are the host's "
                + "clock minus the launcher's, measured NTP-style over ssh (the shortest of 8 round trips; ± half of "
                + "it). On the test bed every host is a network namespace of one machine, one clock: the offsets there "
                + "are ~0 and only show the method's resolution. `events.jsonl` has every host's events on the "
                + "launcher's clock: a host whose offset exceeds its uncertainty has its events' times shifted by it "
                + "(interpolated from start to end); `events/NAME.jsonl` keep each host's own times."),
            .table(hostTable),
        ]
        if !windows.isEmpty {
            let table = Table(["halves", "notices sent", "reached the broker during it", "only after the heal",
                               "never"], rows: windows.map { w in
                Table.Row([Table.Cell(w.hosts)] + [w.sent, w.receivedDuring, w.receivedAfter, w.never].map {
                    Table.Cell(String($0))
                })
            })
            b += [
                .heading("Partitions", level: 3),
                .paragraph("iptables on the hosts dropped every packet between the halves. Notices the server sent "
                    + "meanwhile (head-moved, the source of every hint):"),
                .table(table),
                .paragraph("A notice that arrives only after the heal, or never, is a hint the devices did not get in "
                    + "time: they got those changes by pulling from their cursors (foreground, periodic and heal "
                    + "passes), which `convergence` and `no-lost-edit` check. ZeroMQ's TCP stream holds what a dropped "
                    + "link could not carry and delivers it once the link is back, so most are late rather than lost."),
            ]
        }
        if !failures.isEmpty { b += [.heading("Where the run failed", level: 3), .list(failures)] }
        return b
    }

    /// The lines the terminal's summary adds.
    var summary: String {
        var out = "  hosts: " + hosts.map { host in
            "\(host["name"]?.stringValue ?? "") clock \(clock(host, "start")) → \(clock(host, "end")) "
                + "(\(Self.merge(host)))"
        }.joined(separator: "; ") + "\n"
        for w in windows {
            out += "  partition \(w.hosts): \(w.sent) notices sent, \(w.receivedDuring) reached the broker during it, "
                + "\(w.receivedAfter) only after the heal, \(w.never) never\n"
        }
        return out
    }
}
