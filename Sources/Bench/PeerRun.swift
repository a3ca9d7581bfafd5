import Foundation
import LabKit
import Launcher
import Synchronization

/// What a peer run measured: propagation (saved on the sender → committed on a receiver) over every edit and
/// receiver, and the CPU the bench process and the peer's server spent from the first edit to the last delivery.
struct PeerFigures {
    var p50Ms = Double.nan
    var p99Ms = Double.nan
    var delivered = 0
    var expected = 0
    var cpuMsPerEdit = Double.nan
}

/// Plays the bench's propagation scenario on a peer: `devices` devices of one account, each on its own thread with
/// its own SQLite file and connections; device 0 saves `edits` edits `spacingMs` apart (as the lab's bench run does
/// on d0), every other device applies them.
struct PeerRun {
    let name: String
    let folder: String
    let devices: Int
    let edits: Int
    let spacingMs: Int
    /// The peer's server process, for its CPU.
    let serverPID: pid_t
    /// Makes device `index`'s transport (on the device's own thread).
    let makeDevice: @Sendable (_ index: Int) throws -> PeerDevice

    /// State the device threads share.
    private final class Shared: Sendable {
        let savedAt: Mutex<[UInt64]>
        let latencies = Mutex<[Double]>([])
        let ready = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let finished = Atomic<Int>(0)
        let failure = Mutex<String?>(nil)

        init(edits: Int) { savedAt = Mutex([UInt64](repeating: 0, count: edits)) }

        func fail(_ text: String) {
            failure.withLock { if $0 == nil { $0 = text } }
            stop.store(true, ordering: .releasing)
        }
    }

    func run() throws -> PeerFigures {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let shared = Shared(edits: edits)
        let receivers = devices - 1
        let expected = edits * receivers
        let name = self.name, folder = self.folder, makeDevice = self.makeDevice
        for index in 1..<devices {
            let thread = Thread {
                defer { shared.finished.add(1, ordering: .acquiringAndReleasing) }
                do {
                    let store = try PeerStore(path: "\(folder)/d\(index).sqlite")
                    let device = try makeDevice(index)
                    shared.ready.add(1, ordering: .acquiringAndReleasing)
                    var cursor = try store.cursor()
                    while !shared.stop.load(ordering: .acquiring) {
                        guard try device.awaitHints(timeoutMs: 100) else { continue }
                        let page = try device.pull(after: cursor)
                        guard !page.changes.isEmpty, let next = page.cursor else { continue }
                        try store.apply(page.changes, cursor: next)
                        let now = SimClock.monotonicNanos()
                        cursor = next
                        let saved = shared.savedAt.withLock { at in page.changes.map { at[$0.edit] } }
                        shared.latencies.withLock { list in
                            for start in saved { list.append(Double(now - start) / 1e6) }
                        }
                    }
                } catch {
                    shared.fail("\(name) d\(index): \(error)")
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        defer {
            shared.stop.store(true, ordering: .releasing)
            let deadline = Date().addingTimeInterval(10)
            while shared.finished.load(ordering: .acquiring) < receivers && Date() < deadline { usleep(1_000) }
        }
        let store = try PeerStore(path: "\(folder)/d0.sqlite")
        let origin = try makeDevice(0)
        let readyBy = Date().addingTimeInterval(60)
        while shared.ready.load(ordering: .acquiring) < receivers {
            if let failure = shared.failure.withLock({ $0 }) { throw LabError.io(failure) }
            guard Date() < readyBy else { throw LabError.io("\(name): receivers not ready within 60 s") }
            usleep(1_000)
        }

        let cpuStart = Self.cpuSeconds(serverPID: serverPID)
        let start = SimClock.monotonicNanos()
        for e in 0..<edits {
            let due = start + UInt64(e + 1) * UInt64(spacingMs) * 1_000_000
            let now = SimClock.monotonicNanos()
            if due > now { usleep(UInt32((due - now) / 1_000)) }
            let change = PeerChange(edit: e, key: "edit-\(e)", draft: "draft-\(e % 20)", origin: "d0",
                body: "edit \(e)")
            try store.save(change)
            shared.savedAt.withLock { $0[e] = SimClock.monotonicNanos() }
            let ref = try origin.send(change)
            try store.applied(key: change.key, ref: ref)
            if let failure = shared.failure.withLock({ $0 }) { throw LabError.io(failure) }
            if Signals.stopRequested { throw LabError.io("\(name): interrupted") }
        }
        let deliveredBy = Date().addingTimeInterval(30)
        while shared.latencies.withLock({ $0.count }) < expected && Date() < deliveredBy {
            if let failure = shared.failure.withLock({ $0 }) { throw LabError.io(failure) }
            usleep(1_000)
        }
        let cpuEnd = Self.cpuSeconds(serverPID: serverPID)
        let samples = shared.latencies.withLock { $0 }.sorted()
        guard samples.count == expected else {
            throw LabError.io("\(name): \(samples.count) of \(expected) deliveries within 30 s of the last edit")
        }
        try checkReplay(origin: origin, shared: shared, expected: expected)
        shared.stop.store(true, ordering: .releasing)
        let stoppedBy = Date().addingTimeInterval(10)
        while shared.finished.load(ordering: .acquiring) < receivers && Date() < stoppedBy { usleep(1_000) }
        try checkConverged()
        var figures = PeerFigures()
        figures.delivered = samples.count
        figures.expected = expected
        figures.p50Ms = percentile(samples, 0.50)
        figures.p99Ms = percentile(samples, 0.99)
        figures.cpuMsPerEdit = (cpuEnd - cpuStart) * 1000 / Double(expected)
        return figures
    }

    /// Sends the first edit again with its key, as a device does when it never saw the answer: the server must
    /// answer with the reference it gave the first time and no device may apply it again.
    private func checkReplay(origin: PeerDevice, shared: Shared, expected: Int) throws {
        let first = PeerChange(edit: 0, key: "edit-0", draft: "draft-0", origin: "d0", body: "edit 0")
        let firstRef = try PeerStore(path: "\(folder)/d0.sqlite").database
            .first("SELECT ref FROM ops WHERE key = ?", first.key) { $0.optionalString(0) } ?? nil
        let again = try origin.send(first)
        guard again == firstRef else {
            throw LabError.io("\(name): a replayed edit was appended again (\(again), first \(firstRef ?? "none"))")
        }
        usleep(300_000)
        let delivered = shared.latencies.withLock { $0.count }
        guard delivered == expected else {
            throw LabError.io("\(name): a replayed edit was applied again (\(delivered) deliveries, \(expected) edits)")
        }
    }

    /// Every device's drafts are the sender's, read from their SQLite files once the device threads have stopped.
    private func checkConverged() throws {
        func drafts(_ index: Int) throws -> [String] {
            try PeerStore(path: "\(folder)/d\(index).sqlite").database
                .query("SELECT id, body FROM drafts ORDER BY id") { "\($0.string(0))=\($0.string(1))" }
        }
        let reference = try drafts(0)
        for index in 1..<devices where try drafts(index) != reference {
            throw LabError.io("\(name): d\(index)'s drafts differ from d0's after the run")
        }
    }

    /// This process's CPU seconds (every device thread and the clients' own threads) plus the server's.
    static func cpuSeconds(serverPID: pid_t) -> Double {
        Floors.processCPUMicros() / 1e6 + (ProcessCPU.seconds(pid: serverPID) ?? .nan)
    }
}
