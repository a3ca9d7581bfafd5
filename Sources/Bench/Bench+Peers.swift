import Foundation
import LabKit
import Launcher

/// The peers: the same push path, with the same SQLite commits on both devices, on NATS JetStream and on Redis.
extension Bench {
    /// (devices, edits, spacing ms, key): the same counts and spacing as the lab's own `devices3` and `devices100`.
    var peerRuns: [(devices: Int, edits: Int, spacingMs: Int, key: String)] {
        [(3, quick ? 100 : 1_000, 10, "devices3"), (quick ? 20 : 100, quick ? 20 : 200, quick ? 40 : 60, "devices100")]
    }

    mutating func measurePeers() {
        // Ctrl-C or SIGTERM stops the run in progress, which stops its server: none is left behind.
        Signals.install()
        for peer in ["nats", "redis"] {
            for run in peerRuns where !Signals.stopRequested {
                section("peer \(peer): \(run.devices) devices of one account") {
                    try $0.measurePeer(peer, devices: run.devices, edits: run.edits, spacingMs: run.spacingMs,
                        key: run.key)
                }
            }
        }
        NATSConnection.closeLibrary()
    }

    mutating func measurePeer(_ peer: String, devices: Int, edits: Int, spacingMs: Int, key: String) throws {
        let folder = "\(out)/peers/\(peer)-\(key)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let server = peer == "nats" ? try PeerServer.nats(folder: folder) : try PeerServer.redis(folder: folder)
        defer { server.stop() }
        peerDurability[peer] = server.durability
        let makeDevice: @Sendable (Int) throws -> PeerDevice
        if peer == "nats" {
            let url = "nats://127.0.0.1:\(server.port)"
            try server.waitReady { try NATSPeerDevice.setUp(url: url) }
            makeDevice = { try NATSPeerDevice(url: url, index: $0, devices: devices) }
        } else {
            let port = server.port
            let sha = try server.waitReady { try RedisPeerDevice.setUp(port: port, devices: devices) }
            makeDevice = { try RedisPeerDevice(port: port, index: $0, sha: sha) }
        }
        let figures = try PeerRun(name: "\(peer) \(key)", folder: "\(folder)/devices", devices: devices, edits: edits,
                                  spacingMs: spacingMs, serverPID: server.pid, makeDevice: makeDevice).run()
        record("peers.\(peer).\(key).p50Ms", figures.p50Ms)
        record("peers.\(peer).\(key).p99Ms", figures.p99Ms)
        record("peers.\(peer).\(key).count", Double(figures.delivered))
        record("peers.\(peer).\(key).devices", Double(devices))
        record("peers.\(peer).\(key).cpuMsPerEdit", figures.cpuMsPerEdit)
        record("peers.\(peer).\(key).cpuMsPerEditAll", figures.cpuMsPerEdit * Double(devices - 1))
        // The issue's key: CPU per delivered edit, at 3 devices.
        if key == "devices3" { record("peers.\(peer).cpuMsPerEdit", figures.cpuMsPerEdit) }
    }

    /// The peers beside SyncLab, and the growth table, printed under the main table.
    var peerAndGrowthTable: String {
        var rows: [[String]] = []
        let measuredDevices = value("propagation.devices100.devices")
        let n = Int(measuredDevices.isFinite ? measuredDevices : (quick ? 20 : 100))
        let measured: [(String, String, String)] = [
            ("propagation p50, 3 devices", "devices3.p50Ms", "propagation.devices3.p50Ms"),
            ("propagation p99, 3 devices", "devices3.p99Ms", "propagation.devices3.p99Ms"),
            ("propagation p50, \(n) devices", "devices100.p50Ms", "propagation.devices100.p50Ms"),
            ("propagation p99, \(n) devices", "devices100.p99Ms", "propagation.devices100.p99Ms"),
            ("CPU per delivered edit, 3 devices", "devices3.cpuMsPerEdit", "propagation.devices3.cpuMsPerEdit"),
            ("CPU per delivered edit, \(n) devices", "devices100.cpuMsPerEdit", "propagation.devices100.cpuMsPerEdit"),
        ]
        if peers {
            rows.append(["peer (same path, same SQLite commits)", "figure", "peer", "SyncLab", "SyncLab ÷ peer"])
            for peer in ["nats", "redis"] {
                for (name, peerKey, labKey) in measured {
                    let p = value("peers.\(peer).\(peerKey)"), s = value(labKey)
                    rows.append([peer, name, String(format: "%.3f ms", p), String(format: "%.3f ms", s),
                                 String(format: "%.2f×", s / p)])
                }
            }
            // Ratios only: the targets are judged in `targetTable` (CostTargets).
            for (name, peerKey, labKey) in measured {
                let best = ["nats", "redis"].map { value("peers.\($0).\(peerKey)") }.filter(\.isFinite).min() ?? .nan
                let s = value(labKey)
                let floor = value("floor.propagationMs")
                let latency = peerKey.hasSuffix("Ms") && !peerKey.contains("cpu")
                let verdict = String(format: "%.2f× the best peer", s / best)
                rows.append(["best peer", name,
                             latency ? String(format: "%.3f ms (%.1f× floor)", best,
                                 best / floor) : String(format: "%.3f ms", best),
                             latency ? String(format: "%.3f ms (%.1f× floor)", s,
                                 s / floor) : String(format: "%.3f ms", s),
                             verdict])
            }
        }
        rows.append(["growth (one account)", "devices", "p50 / p99 ms", "CPU ms per delivered edit",
            "CPU ms per edit, all"])
        for point in growthPoints {
            let base = "propagation.\(point.key)"
            rows.append(["SyncLab" + (point.pooled ? ", pooled" : ""), String(point.devices),
                         String(format: "%.3f / %.3f", value("\(base).p50Ms"), value("\(base).p99Ms")),
                         String(format: "%.3f", value("\(base).cpuMsPerEdit")),
                         String(format: "%.2f", value("\(base).cpuMsPerEditAll"))])
        }
        for kind in ["processes", "pooled"] {
            func power(_ key: String) -> String {
                let v = value("growth.\(kind).\(key)")
                return v.isFinite ? String(format: "N^%.2f", v) : "— (fewer than 2 sizes)"
            }
            rows.append(["growth exponent, \(kind)", "", "p50 " + power("p50Exponent"),
                         "CPU per edit, all " + power("cpuExponent"), "O(N) is N^1"])
        }
        func render(_ rows: [[String]]) -> String {
            let widths = (0..<5).map { c in rows.map { $0[c].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { $0.element.padding(toLength: widths[$0.offset] + 2, withPad: " ",
                    startingAt: 0) }
                    .joined().trimmingCharacters(in: .whitespaces)
            }.joined(separator: "\n") + "\n"
        }
        let split = rows.firstIndex { $0[0] == "growth (one account)" } ?? 0
        var text = "\n" + render(Array(rows[..<split]))
        if peers {
            text += "durability: SyncLab SQLite WAL, synchronous=normal on every database; "
            text += ["nats", "redis"].map { "\($0): \(peerDurability[$0] ?? "not run")" }.joined(separator: "; ") + "\n"
            text += "peers: devices are threads of the bench process, each with its own SQLite file and connections;\n"
            text += "SyncLab's CPU is every lab process's from the scenario's start to its end (/proc ticks of 10 "
                + "ms).\n\n"
        }
        return text + render(Array(rows[split...]))
    }
}
