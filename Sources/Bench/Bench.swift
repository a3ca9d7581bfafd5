import Foundation
import LabControl
import LabKit
import Launcher
import SQLite
import SyncProtocol
import ZeroMQ

/// `synclab bench`: the lab's speed and memory, each figure beside the floor or raw counterpart measured in the same
/// run on this machine, written to `bench.json` and printed as a table. Targets live here, not in tests.
struct Bench {
    let out: String
    let bin: String
    let quick: Bool
    /// Whether the NATS and Redis peers run (`--no-peers` skips them).
    var peers = true
    /// Durability each peer ran with, stated beside its figures.
    var peerDurability: [String: String] = [:]
    var figures: [(key: String, value: Double)] = []
    /// Sections that could not be measured, with why; their figures are null in bench.json.
    var failures: [String] = []
    /// Whether the simulation also plays 10,000 devices for a day (`--sim-10k`: minutes).
    var tenThousand = false
    /// Where each simulated run's databases lived (`files` or `memory`), by its figures' key.
    var storages: [String: String] = [:]

    init(out: String, bin: String, quick: Bool) {
        self.out = out
        self.bin = bin
        self.quick = quick
    }

    mutating func record(_ key: String, _ value: Double) {
        figures.append((key, value))
    }

    func value(_ key: String) -> Double { figures.first { $0.key == key }?.value ?? .nan }

    func progress(_ text: String) { Output.stderr("bench: \(text)\n") }

    mutating func run() throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let ipc = "ipc://\(out)/floor.sock"
        progress("floor: zmq round trip, SQLite commit")
        let rt = try Floors.zmqRoundTrip(endpoint: ipc, count: quick ? 2_000 : 20_000).micros
        let rtTCP = try Floors.zmqRoundTrip(endpoint: "tcp://127.0.0.1:*", count: quick ? 2_000 : 20_000).micros
        let idle = try Floors.zmqRoundTrip(endpoint: ipc, count: quick ? 50 : 300, idleMicros: 10_000)
        let socketIdle = try Floors.socketRoundTrip(count: quick ? 50 : 300, idleMicros: 10_000)
        let rtIdle = idle.micros
        let rtCurve = try Floors.zmqRoundTrip(endpoint: "ipc://\(out)/floor-curve.sock",
                                              count: quick ? 2_000 : 20_000, curve: true).micros
        // The processes the bench starts run WAL with synchronous=normal (their default): that commit is the floor;
        // the fsync'ing FULL commit is measured beside it.
        let commit = try Floors.sqliteCommitMicros(folder: out, count: quick ? 500 : 5_000, synchronous: .normal)
        let commitFull = try Floors.sqliteCommitMicros(folder: out, count: quick ? 300 : 2_000, synchronous: .full)
        record("floor.zmqRoundTripUs", rt)
        record("floor.zmqRoundTripTcpUs", rtTCP)
        record("floor.zmqRoundTripIdleUs", rtIdle)
        record("floor.zmqRoundTripIdleCpuUs", idle.cpuMicros)
        record("floor.socketRoundTripIdleUs", socketIdle.micros)
        record("floor.socketRoundTripIdleCpuUs", socketIdle.cpuMicros)
        record("floor.zmqRoundTripCurveUs", rtCurve)
        record("floor.sqliteCommitUs", commit)
        record("floor.sqliteCommitFullUs", commitFull)
        // Edit commit, op send (½ rt), server commit, notice (½ rt), hint (½ rt), pull round trip, apply commit.
        record("floor.propagationMs", (3 * commit + 2.5 * rt) / 1000)
        // The same path with every hop starting from idle threads: what this machine's wake-ups add (context only;
        // the targets are against the floor above).
        record("floor.propagationIdleMs", (3 * commit + 2.5 * rtIdle) / 1000)

        section("floor: the lab's messages with no work, 3 and \(quick ? 20 : 100) processes") {
            try $0.measureSkeleton()
        }
        section("server: exactly-once apply and pulls") { try $0.measureServer() }
        section("server: the same with CURVE") { try $0.measureServer(curve: true) }
        section("broker: hints against a raw fan-out") { try $0.measureBroker() }
        section("propagation: 3 devices") {
            try $0.measurePropagation(devices: 3, edits: $0.quick ? 100 : 1_000, spacingMs: 10, key: "devices3")
        }
        // The lab runs CURVE by default (docs/SECURITY.md): the same run in plaintext says what it costs.
        section("propagation: 3 devices, CURVE off") {
            try $0.measurePropagation(devices: 3, edits: $0.quick ? 100 : 1_000, spacingMs: 10, key: "devices3plain",
                                      security: "none")
        }
        section("propagation: \(quick ? 20 : 100) devices of one account") {
            try $0.measurePropagation(devices: $0.quick ? 20 : 100, edits: $0.quick ? 20 : 200,
                                      spacingMs: $0.quick ? 40 : 60, key: "devices100")
        }
        // The same account with its devices hosted by one pool process: what the 100 processes cost in scheduling.
        section("propagation: \(quick ? 20 : 100) devices of one account, pooled") {
            try $0.measurePropagation(devices: $0.quick ? 20 : 100, edits: $0.quick ? 20 : 200,
                                      spacingMs: $0.quick ? 40 : 60, key: "devices100pooled", pools: 1)
        }
        measureGrowth()
        if peers { measurePeers() }
        recordTargets()
        section("simulation: seconds per run, device-days per second, memory per device") { try $0.measureSimulation() }
    }

    /// Runs one part of the bench; a part that fails is reported and the others still run.
    mutating func section(_ name: String, _ body: (inout Bench) throws -> Void) {
        progress(name)
        do {
            try body(&self)
        } catch {
            failures.append("\(name): \(error)")
            progress("FAILED \(name): \(error)")
        }
    }

    // MARK: - Server

    /// `curve`: the server runs CURVE (keys made here) and the figures are recorded as `server.curve.*`.
    mutating func measureServer(curve: Bool = false) throws {
        let folder = "\(out)/server\(curve ? "-curve" : "")"
        let prefix = curve ? "server.curve" : "server"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var keys = RunKeys(directory: "\(folder)/keys")
        var keyArgs: [String] = []
        var publicKey = ""
        if curve {
            for name in ["server", "launcher", "client"] { try keys.make(name) }
            keyArgs = ["--key-file", keys.secretFile("server"), "--launcher-key-file", keys.publicFile("launcher")]
            publicKey = #","publicKey":"\#(keys.pairs["client"]!.publicKey)""#
        }
        let device = #"{"id":"client","platform":"android","token":"t-bench"\#(publicKey)}"#
        try #"{"accounts":[{"id":"bench","devices":[\#(device)]}]}"#
            .write(toFile: "\(folder)/accounts.json", atomically: true, encoding: .utf8)
        let listen = "ipc://\(folder)/server.sock"
        let server = RoleProcess(name: "server", executable: "\(bin)/synclab-server",
                                  arguments: ["--db", "\(folder)/server.sqlite", "--listen", listen,
                                              "--accounts", "\(folder)/accounts.json",
                                              "--control", "ipc://\(folder)/control.sock",
                                              // As in every lab run: each event is written to its file.
                                              "--events", "\(folder)/events.jsonl"] + keyArgs,
                                  logPath: "\(folder)/server.log")
        try server.start()
        defer { server.signal(SIGTERM); if !server.wait(timeout: 5) { server.killNow() } }
        let context = try Context()
        let serverKey = keys.pairs["server"]?.publicKey
        let control = try ControlClient(context: context, name: "server", endpoint: "ipc://\(folder)/control.sock",
                                        curve: curve ? (keys.pairs["launcher"]!, serverKey!) : nil)
        try control.waitReady(timeout: 20, alive: { !server.poll() })
        let client = try WireClient(context: context, endpoint: listen,
                                    curve: curve ? (keys.pairs["client"]!, serverKey!) : nil)
        let welcome = try client.call(.hello(Hello(device: "client", account: "bench", token: "t-bench",
            platform: .android)))
        guard case .welcome = welcome else { throw LabError.io("bench: server refused hello: \(welcome)") }

        let batches = quick ? 100 : 1_000
        var req = 0
        let body = String(repeating: "x", count: 64)
        let start = SimClock.monotonicNanos()
        for b in 0..<batches {
            req += 1
            let ops = (0..<100).map { i in
                Op(key: "bench-\(b)-\(i)", draft: "d\(i % 50)", action: .update, base: 0, title: "T", body: body)
            }
            guard case .pushResult(let result) = try client.call(.push(Push(req: req, ops: ops))),
                  result.results.allSatisfy({ $0.outcome == .applied })
            else { throw LabError.io("bench: a push batch was not applied") }
        }
        let applySeconds = Double(SimClock.monotonicNanos() - start) / 1e9
        record("\(prefix).opsPerSec", Double(batches * 100) / applySeconds)
        if !curve {
            record("memory.serverMB", server.residentMB ?? .nan)
            record("memory.serverPrivateMB", server.privateMB ?? .nan)
        }

        // Replays answer from the idempotency records and change nothing.
        let replayStart = SimClock.monotonicNanos()
        let replays = max(10, batches / 10)
        for b in 0..<replays {
            req += 1
            let ops = (0..<100).map { i in
                Op(key: "bench-\(b)-\(i)", draft: "d\(i % 50)", action: .update, base: 0, title: "T", body: body)
            }
            _ = try client.call(.push(Push(req: req, ops: ops)))
        }
        record("\(prefix).replaysPerSec",
            Double(replays * 100) / (Double(SimClock.monotonicNanos() - replayStart) / 1e9))

        let pullStart = SimClock.monotonicNanos()
        var pulled = 0
        var rounds = 0
        repeat {
            var cursor = 0
            while true {
                req += 1
                guard case .page(let page) = try client.call(.pull(Pull(req: req, cursor: cursor, limit: 1_000))) else {
                    throw LabError.io("bench: pull refused")
                }
                pulled += page.changes.count
                cursor = page.next
                if page.changes.isEmpty || cursor >= page.head { break }
            }
            rounds += 1
        } while rounds < 3
        record("\(prefix).pullChangesPerSec", Double(pulled) / (Double(SimClock.monotonicNanos() - pullStart) / 1e9))
    }

    // MARK: - Propagation

    mutating func measurePropagation(devices: Int, edits: Int, spacingMs: Int, key: String, pools: Int = 0,
                                     security: String = "curve") throws {
        var ids: [String] = []
        var deviceLines: [String] = []
        for i in 0..<devices {
            let id = "d\(i)"
            ids.append(id)
            deviceLines.append(#"{ id: "\#(id)", platform: "android", start: "foreground", charging: true }"#)
        }
        var steps: [String] = []
        for e in 0..<edits {
            let at = Double(e + 1) * Double(spacingMs) / 1000
            steps.append(#"{ at: \#(at), action: "edit", device: "d0", draft: "draft-\#(e % 20)", title: "t","#
                + #" body: "edit \#(e)" }"#)
        }
        let duration = Double(edits + 10) * Double(spacingMs) / 1000 + 1
        let text = """
            // Generated by synclab bench: one account, \(devices) devices, \(edits) edits on d0, no chaos.
            { name: "bench-\(key)", seed: 1, timeScale: 1, duration: \(duration), heal: { timeoutSec: 120 }, pools: \
            \(pools),
              security: "\(security)",
              accounts: [{ id: "bench", devices: [\(deviceLines.joined(separator: ", "))] }],
              scenario: [\(steps.joined(separator: ",\n"))] }
            """
        let topology = try Topology.parse(text, file: "bench-\(key).json5", defaultName: key)
        let folder = RunFolder(root: "\(out)/\(key)")
        let run = try LabRun(topology: topology, topologyText: text, folder: folder, binDirectory: bin, quiet: true)
        try run.run()
        let report = try Report.make(folder: folder)
        report.write()
        guard report.passed else {
            throw LabError.io("bench: the \(key) run failed its invariants: "
                + report.invariants.filter { !$0.held }.map { "\($0.name): \($0.detail)" }.joined(separator: "; "))
        }
        let push = report.figures.propagationByPath["push"] ?? report.figures.propagation
        record("propagation.\(key).p50Ms", push.p50Ms)
        record("propagation.\(key).p99Ms", push.p99Ms)
        record("propagation.\(key).count", Double(push.count))
        record("propagation.\(key).devices", Double(devices))
        recordCost(key: key, report: report)
        if key == "devices100" {
            // Devices that only received: their resident size after the run is an idle device's.
            let sizes = (report.data.stats["residentMB"]?.objectValue ?? [])
                .filter { $0.0.hasPrefix("d") && $0.0 != "d0" }.compactMap { $0.1.doubleValue }
            record("memory.deviceIdleMB", median(sizes) ?? .nan)
            let privateSizes = (report.data.stats["privateMB"]?.objectValue ?? [])
                .filter { $0.0.hasPrefix("d") && $0.0 != "d0" }.compactMap { $0.1.doubleValue }
            record("memory.deviceIdlePrivateMB", median(privateSizes) ?? .nan)
        }
    }

    // MARK: - Output

    /// bench.json with dotted keys nested.
    var json: JSONValue {
        var root: [(String, JSONValue)] = []
        func insert(_ path: [String], _ value: JSONValue, into pairs: inout [(String, JSONValue)]) {
            guard let first = path.first else { return }
            if path.count == 1 {
                pairs.append((first, value))
                return
            }
            var child: [(String, JSONValue)] = []
            if let index = pairs.firstIndex(where: { $0.0 == first }), case .object(let existing) = pairs[index].1 {
                child = existing
                pairs.remove(at: index)
            }
            insert(Array(path.dropFirst()), value, into: &child)
            pairs.append((first, .object(child)))
        }
        for figure in figures {
            let value: JSONValue = figure.value.isFinite ? .double(round3(figure.value)) : .null
            insert(figure.key.split(separator: ".").map(String.init), value, into: &root)
        }
        for (peer, durability) in peerDurability.sorted(by: { $0.key < $1.key }) {
            insert(["peers", peer, "durability"], .string(durability), into: &root)
        }
        insert(["machine"], .object(machine), into: &root)
        insert(["quick"], .bool(quick), into: &root)
        insert(["failures"], .array(failures.map { .string($0) }), into: &root)
        return .object(root)
    }

    var machine: [(String, JSONValue)] {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        return [("cpu", .string(cpu)), ("cores", .int(ProcessInfo.processInfo.activeProcessorCount)),
                ("memoryGB", .double(round3(Double(ProcessInfo.processInfo.physicalMemory) / 1e9))),
                ("zmq", .string("\(Context.version.major).\(Context.version.minor).\(Context.version.patch)")),
                ("date", .string(ISO8601DateFormatter().string(from: Date())))]
    }

    /// The readable table: every figure beside its floor or raw counterpart, and each target met or missed.
    var table: String {
        let rt = value("floor.zmqRoundTripUs"), commit = value("floor.sqliteCommitUs"),
            floor = value("floor.propagationMs")
        var rows: [(String, String, String, String)] = []
        func row(_ name: String, _ v: String, _ beside: String,
            _ target: String) { rows.append((name, v, beside, target)) }
        func verdict(_ ok: Bool, _ miss: String) -> String { ok ? "met" : "MISSED \(miss)" }
        row("zmq round trip (ipc)", String(format: "%.1f µs", rt),
            String(format: "tcp %.1f µs", value("floor.zmqRoundTripTcpUs")), "floor")
        row("zmq round trip (ipc), CURVE", String(format: "%.1f µs", value("floor.zmqRoundTripCurveUs")),
            String(format: "%+.1f µs over NULL", value("floor.zmqRoundTripCurveUs") - rt), "floor")
        row("SQLite WAL commit (normal)", String(format: "%.1f µs", commit),
            String(format: "full (fsync) %.1f µs", value("floor.sqliteCommitFullUs")), "floor")
        row("push-path floor", String(format: "%.3f ms", floor), "3 commits + 2.5 round trips", "floor")
        row("zmq round trip from idle (ipc)", String(format: "%.1f µs", value("floor.zmqRoundTripIdleUs")),
            String(format: "path floor from idle %.3f ms; CPU %.1f µs a round trip", value("floor.propagationIdleMs"),
                   value("floor.zmqRoundTripIdleCpuUs")), "context")
        row("socket round trip from idle (no zmq)", String(format: "%.1f µs", value("floor.socketRoundTripIdleUs")),
            String(format: "CPU %.1f µs a round trip; zmq %.1f× the time, %.1f× the CPU",
                   value("floor.socketRoundTripIdleCpuUs"),
                   value("floor.zmqRoundTripIdleUs") / value("floor.socketRoundTripIdleUs"),
                   value("floor.zmqRoundTripIdleCpuUs") / value("floor.socketRoundTripIdleCpuUs")), "context")
        for (key, label) in [("devices3", "3"), ("devices100", quick ? "20" : "100")] {
            let base = "floor.skeleton.\(key)"
            row("no work at all, \(label) devices: p50", String(format: "%.3f ms", value("\(base).p50Ms")),
                String(format: "p99 %.3f ms; CPU %.3f ms per delivered edit (the lab's messages alone)",
                       value("\(base).p99Ms"), value("\(base).cpuMsPerEdit")), "context")
        }
        let p50 = value("propagation.devices3.p50Ms"), p99 = value("propagation.devices3.p99Ms")
        row("propagation p50, 3 devices", String(format: "%.3f ms", p50),
            String(format: "%.1f× floor, %.1f× from idle", p50 / floor, p50 / value("floor.propagationIdleMs")),
            verdict(p50 <= 1 && p50 <= 4 * floor, String(format: "(≤ 1 ms and ≤ 4× floor: %.1f×)", p50 / floor)))
        row("propagation p99, 3 devices", String(format: "%.3f ms", p99), String(format: "%.1f× floor", p99 / floor),
            verdict(p99 <= 5, String(format: "(≤ 5 ms: %.1f×)", p99 / 5)))
        let plain = value("propagation.devices3plain.p50Ms")
        let curveCost = (p50 / plain - 1) * 100
        row("propagation p50, 3 devices, CURVE off", String(format: "%.3f ms", plain),
            String(format: "CURVE adds %.0f %% (p99 off %.3f ms)", curveCost, value("propagation.devices3plain.p99Ms")),
            verdict(curveCost < 30, String(format: "(CURVE < 30 %%: %.0f %%)", curveCost)))
        let devices = value("propagation.devices100.devices")
        let n = devices.isFinite ? String(Int(devices)) : (quick ? "20" : "100")
        let p50n = value("propagation.devices100.p50Ms")
        row("propagation p50, \(n) devices", String(format: "%.3f ms", p50n),
            String(format: "%.1f× floor", p50n / floor),
            verdict(p50n <= 5, String(format: "(≤ 5 ms: %.1f×)", p50n / 5)))
        row("propagation p99, \(n) devices", String(format: "%.3f ms", value("propagation.devices100.p99Ms")), "", "")
        let pooled = value("propagation.devices100pooled.p50Ms")
        row("propagation p50, \(n) devices in 1 pool", String(format: "%.3f ms", pooled),
            String(format: "%.1f× floor; p99 %.3f ms", pooled / floor, value("propagation.devices100pooled.p99Ms")),
            verdict(pooled <= 5, String(format: "(≤ 5 ms: %.1f×)", pooled / 5)))
        let ops = value("server.opsPerSec")
        row("server ops applied/s (batches of 100)", String(format: "%.0f", ops),
            String(format: "%.1f µs per op (one commit of %.1f µs per 100)", 1e6 / ops, commit),
            verdict(ops >= 50_000, String(format: "(≥ 50,000: %.2f×)", ops / 50_000)))
        let curveOps = value("server.curve.opsPerSec")
        row("server ops applied/s with CURVE", String(format: "%.0f", curveOps),
            String(format: "%.0f %% of plaintext; pulls %.0f/s", curveOps / ops * 100,
                   value("server.curve.pullChangesPerSec")), "")
        row("server replays answered/s", String(format: "%.0f", value("server.replaysPerSec")), "", "")
        let pulls = value("server.pullChangesPerSec")
        row("server changes pulled/s", String(format: "%.0f", pulls), "",
            verdict(pulls >= 200_000, String(format: "(≥ 200,000: %.2f×)", pulls / 200_000)))
        rows.append(brokerRow)
        let idle = value("memory.deviceIdleMB")
        row("idle device resident", String(format: "%.1f MB", idle),
            String(format: "%.1f MB its own; the rest shared libraries", value("memory.deviceIdlePrivateMB")),
            verdict(idle <= 20, String(format: "(≤ 20 MB: %.1f×)", idle / 20)))
        row("server resident under load", String(format: "%.1f MB", value("memory.serverMB")),
            String(format: "%.1f MB its own", value("memory.serverPrivateMB")), "")
        rows += simulationRows
        let w0 = rows.map(\.0.count).max()!, w1 = rows.map(\.1.count).max()!, w2 = rows.map(\.2.count).max()!
        return rows.map {
            $0.0.padding(toLength: w0 + 2, withPad: " ", startingAt: 0)
                + $0.1.padding(toLength: w1 + 2, withPad: " ", startingAt: 0)
                + $0.2.padding(toLength: w2 + 2, withPad: " ", startingAt: 0) + $0.3
        }.joined(separator: "\n") + "\n" + peerAndGrowthTable + targetTable
    }
}

/// A DEALER that sends one message and waits for the reply, for the bench's clients.
final class WireClient {
    let socket: Socket

    init(context: Context, endpoint: String, curve: (CurveKeyPair, String)? = nil) throws {
        socket = try Socket(context, .dealer)
        if let (own, server) = curve { try socket.setCurveClient(own, serverKey: server) }
        try socket.connect(endpoint)
    }

    func call(_ message: Message, timeoutMs: Int = 10_000) throws -> Message {
        try socket.send(Codec.encode(message))
        var poller = Poller([socket])
        guard !(try poller.poll(timeoutMs: timeoutMs)).isEmpty, let frames = try socket.receive(dontWait: true) else {
            throw LabError.io("no reply to \(message.type) within \(timeoutMs) ms")
        }
        return try Codec.decode(frames)
    }
}
