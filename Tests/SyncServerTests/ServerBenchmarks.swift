import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncProtocol
import Testing

@testable import SyncServer

/// Throughput, run only when asked (`SYNCLAB_BENCH=1`); speed belongs here, not in the tests' assertions.
/// Best in release: `SYNCLAB_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter ServerBenchmarks`.
@Suite("server benchmarks", .serialized, .enabled(if: ProcessInfo.processInfo.environment["SYNCLAB_BENCH"] == "1"))
struct ServerBenchmarks {
    static let batches = 1_000
    static let batchSize = 100

    static func ops(batch: Int) -> [Op] {
        (0..<batchSize).map { i in
            let n = batch * batchSize + i
            return Op(key: "bench-\(n)", draft: "draft-\(n % 500)", action: .update, base: 0, title: "title \(n)",
                      body: "a short draft body, like a note typed on a phone: \(n)")
        }
    }

    @Test("store.apply: 100,000 ops in batches of 100", arguments: [Synchronous.full, Synchronous.normal])
    func storeApply(synchronous: Synchronous) throws {
        let folder = TempFolder()
        let store = try ServerStore(path: folder.file("bench.sqlite"), synchronous: synchronous)
        try store.addDevice(DeviceRecord(id: "pixel", account: "acme", platform: .android, token: "t"))
        let batches = (0..<Self.batches).map { Self.ops(batch: $0) }
        let start = SimClock.monotonicNanos()
        let cpuStart = Self.threadCPUSeconds()
        for batch in batches {
            _ = try store.apply(device: "pixel", account: "acme", ops: batch)
        }
        let cpu = Self.threadCPUSeconds() - cpuStart
        let seconds = Double(SimClock.monotonicNanos() - start) / 1e9
        let total = Self.batches * Self.batchSize
        #expect(try store.head(account: "acme") == total)
        // On a shared machine wall time includes waiting for a core; CPU time is what the work itself costs.
        print("BENCH store.apply synchronous=\(synchronous.rawValue): \(total) ops in "
            + "\(String(format: "%.2f", seconds)) s wall = \(Int(Double(total) / seconds)) ops/s; "
            + "\(String(format: "%.2f", cpu)) s CPU = \(Int(Double(total) / cpu)) ops per CPU-second")
    }

    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// utime + stime of a process, from /proc.
    static func processCPUSeconds(_ pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based, counting pid and comm).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("over the wire: one device pushes 100,000 ops in batches of 100 to a synclab-server process",
          arguments: ["full", "normal"])
    func overTheWire(synchronous: String) throws {
        let server = try ServerProcess.started(extraArguments: ["--synchronous", synchronous])
        let client = try server.client()
        #expect(try client.hello("pixel", "acme", "t-pixel") != nil)
        let pid = try #require(server.child?.pid)
        let cpuStart = Self.processCPUSeconds(pid)
        let start = SimClock.monotonicNanos()
        for batch in 0..<Self.batches {
            guard case .pushResult(let result)? = try client.push(Self.ops(batch: batch), timeoutMs: 30_000) else {
                Issue.record("batch \(batch) unanswered")
                return
            }
            #expect(result.results.count == Self.batchSize)
        }
        let seconds = Double(SimClock.monotonicNanos() - start) / 1e9
        let serverCPU = Self.processCPUSeconds(pid) - cpuStart
        let total = Self.batches * Self.batchSize
        print("BENCH wire synchronous=\(synchronous): \(total) ops in \(String(format: "%.2f", seconds)) s = "
            + "\(Int(Double(total) / seconds)) ops/s, \(String(format: "%.2f", seconds * 1000 / Double(Self.batches))) "
            + "ms per batch of \(Self.batchSize) (events on); server CPU \(String(format: "%.2f", serverCPU)) s = "
            + "\(Int(Double(total) / serverCPU)) ops per server CPU-second")
        var cursor = 0
        let pullStart = SimClock.monotonicNanos()
        while cursor < total {
            guard case .page(let page)? = try client.pull(cursor: cursor, limit: 1_000, timeoutMs: 30_000) else {
                Issue.record("pull from \(cursor) unanswered")
                return
            }
            cursor = page.next
        }
        let pullSeconds = Double(SimClock.monotonicNanos() - pullStart) / 1e9
        print("BENCH wire pull: \(total) changes in pages of 1000 in \(String(format: "%.2f", pullSeconds)) s = "
            + "\(Int(Double(total) / pullSeconds)) changes/s")
        #expect(server.terminate() == 0)
    }
}
