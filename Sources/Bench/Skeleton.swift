import Foundation
import LabKit
import Launcher
import ZeroMQ

/// The lab's messages with none of its work: one process each for a server, a broker and the devices, speaking
/// libzmq over `ipc` exactly as a run's edit travels (the launcher's `edit` to d0 and its answer, the push and its
/// answer, the notice, and for each receiver a hint, a pull and a page), with no SQLite, no CURVE, no decoding, no
/// events and no decisions. What is left is what libzmq's threads and this machine's wake-ups cost: the floor of
/// the lab's design here, beside the peers' whole figures. Each message is one frame: its kind, its phase and the
/// monotonic ns at which the launcher sent the edit (the same clock in every process).
enum Skeleton {
    /// Median and 99th percentile ms from the launcher's edit to each receiver's page, and the CPU ms the lab's roles
    /// (server, broker, devices: not the launcher, as in a run's cost) spent per delivered edit.
    struct Figures {
        let p50Ms: Double, p99Ms: Double, cpuMsPerEdit: Double
    }

    enum Kind: UInt8 {
        case edit = 0x45, answer = 0x4B, push = 0x50, pushAnswer = 0x41, notice = 0x4E, hint = 0x48, pull = 0x4C,
             page = 0x47, register = 0x52, registered = 0x72
    }

    /// The first edit warms the path up (each role counts its CPU from it), the last ends every role.
    enum Phase: UInt8 { case warm = 0, measured = 1, quit = 2 }

    static func message(_ kind: Kind, _ phase: Phase, _ nanos: UInt64) -> Frame {
        [kind.rawValue, phase.rawValue] + withUnsafeBytes(of: nanos.littleEndian) { Array($0) }
    }

    static func parse(_ frame: Frame) -> (kind: Kind, phase: Phase, nanos: UInt64)? {
        guard frame.count == 10, let kind = Kind(rawValue: frame[0]), let phase = Phase(rawValue: frame[1]) else {
            return nil
        }
        let nanos = frame[2...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (kind, phase, nanos)
    }

    /// Runs the skeleton with `devices` processes (d0 edits, the others receive), `edits` edits `spacingMs` apart.
    static func measure(bin: String, folder: String, devices: Int, edits: Int, spacingMs: Int) throws -> Figures {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let roles = ["server", "broker"] + (0..<devices).map { "d\($0)" }
        let processes = roles.map { role in
            RoleProcess(name: role, executable: "\(bin)/synclab", arguments: ["bench", "--skeleton-node", role, folder],
                        logPath: "\(folder)/\(role).log")
        }
        defer { for process in processes where !process.poll() { process.killNow() } }
        for process in processes { try process.start() }
        // Every device says it is ready once its sockets are up (a receiver once the broker has registered it).
        let deadline = Date().addingTimeInterval(60)
        while (0..<devices).contains(where: { !FileManager.default.fileExists(atPath: "\(folder)/ready-d\($0)") }) {
            guard Date() < deadline, processes.allSatisfy({ !$0.poll() }) else {
                throw LabError.io("bench: the skeleton's processes did not all start (logs in \(folder))")
            }
            usleep(10_000)
        }
        let context = try Context()
        let control = try Socket(context, .dealer)
        try control.setReceiveTimeout(ms: 10_000)
        try control.connect("ipc://\(folder)/control.sock")
        func edit(_ phase: Phase) throws {
            _ = try control.send([message(.edit, phase, SimClock.monotonicNanos())])
            guard try control.receive() != nil else { throw LabError.io("bench: the skeleton's d0 did not answer") }
        }
        try edit(.warm)
        usleep(100_000)
        for _ in 0..<edits {
            usleep(UInt32(spacingMs * 1_000))
            try edit(.measured)
        }
        usleep(200_000)
        try edit(.quit)
        for process in processes where !process.wait(timeout: 20) {
            throw LabError.io("bench: the skeleton's \(process.name) did not end (log in \(folder))")
        }
        var cpuMicros = 0.0
        var latencies: [Double] = []
        for role in roles {
            let text = try String(contentsOfFile: "\(folder)/\(role).out", encoding: .utf8)
            let numbers = text.split(separator: " ").compactMap { Double($0) }
            cpuMicros += numbers.first ?? .nan
            latencies += numbers.dropFirst()
        }
        let delivered = (devices - 1) * edits
        guard latencies.count == delivered else {
            throw LabError.io("bench: the skeleton delivered \(latencies.count) of \(delivered) pages")
        }
        // The percentiles the lab's runs and the peers' are read with, so the three compare like for like.
        latencies.sort()
        return Figures(p50Ms: percentile(latencies, 0.50), p99Ms: percentile(latencies, 0.99),
                       cpuMsPerEdit: cpuMicros / 1_000 / Double(delivered))
    }

    /// `synclab bench --skeleton-node ROLE FOLDER`: one role of the skeleton, started by `measure` (not for users).
    static func node(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2 else {
            Output.stderr("synclab bench --skeleton-node ROLE FOLDER: one process of the skeleton the bench starts\n")
            return 2
        }
        do {
            try Node(role: arguments[0], folder: arguments[1]).run()
            return 0
        } catch {
            Output.stderr("skeleton \(arguments[0]): \(error)\n")
            return 1
        }
    }
}

extension Bench {
    /// The skeleton in the shapes of the 3- and 100-device propagation runs (the same edits and spacing):
    /// `floor.skeleton.devices3.*` and `floor.skeleton.devices100.*`.
    mutating func measureSkeleton() throws {
        let hundred = quick ? 20 : 100
        for (devices, edits, spacingMs, key) in [(3, quick ? 100 : 1_000, 10, "devices3"),
                                                 (hundred, quick ? 20 : 200, quick ? 40 : 60, "devices100")] {
            let figures = try Skeleton.measure(bin: bin, folder: "\(out)/skeleton-\(devices)", devices: devices,
                                               edits: edits, spacingMs: spacingMs)
            record("floor.skeleton.\(key).p50Ms", figures.p50Ms)
            record("floor.skeleton.\(key).p99Ms", figures.p99Ms)
            record("floor.skeleton.\(key).cpuMsPerEdit", figures.cpuMsPerEdit)
        }
    }
}
