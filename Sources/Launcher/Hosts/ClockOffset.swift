import Foundation
import SyncProtocol

/// A host's clock against the launcher's, measured as NTP does: the launcher notes t0, the host answers its own
/// time t, the launcher notes t1; offset = t − (t0 + t1) / 2, uncertainty = (t1 − t0) / 2 (the host read its clock
/// somewhere in the round trip). Of several round trips over one ssh session, the shortest is kept.
struct ClockOffset: Sendable {
    let phase: String
    let offsetMs: Double
    let uncertaintyMs: Double
    let samples: Int
    /// The launcher's wall clock (µs) at the kept round trip's middle: where the offset held.
    var atMicros: Int64 = 0

    var json: JSONValue {
        .object([("phase", .string(phase)), ("offsetMs", .double((offsetMs * 1000).rounded() / 1000)),
                 ("uncertaintyMs", .double((uncertaintyMs * 1000).rounded() / 1000)), ("samples", .int(samples)),
                 ("atMicros", .int(Int(atMicros)))])
    }

    /// The offset from `rounds` round trips (each a line written to a remote loop that answers `date +%s%N`);
    /// nil when the host does not answer.
    static func measure(_ ssh: SSH, phase: String, rounds: Int = 8) -> ClockOffset? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh")
        process.arguments = Array(ssh.argv("while read line; do date +%s%N; done", stdinNull: false).dropFirst())
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        defer {
            try? input.fileHandleForWriting.close()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(5_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var best: (rtt: Double, offset: Double, at: Double)?
        var pending = ""
        var answered = 0
        for _ in 0..<rounds {
            let t0 = wallNanos()
            input.fileHandleForWriting.write(Data("t\n".utf8))
            // One line back: the host's nanoseconds.
            while !pending.contains("\n") {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return summary(best, answered, phase) }
                pending += String(decoding: data, as: UTF8.self)
            }
            let t1 = wallNanos()
            let line = String(pending[..<pending.firstIndex(of: "\n")!])
            pending = String(pending[pending.index(after: pending.firstIndex(of: "\n")!)...])
            guard let remote = Double(line.trimmingCharacters(in: .whitespaces)) else { continue }
            answered += 1
            let rtt = t1 - t0
            let offset = remote - (t0 + t1) / 2
            if best == nil || rtt < best!.rtt { best = (rtt, offset, (t0 + t1) / 2) }
        }
        return summary(best, answered, phase)
    }

    private static func summary(_ best: (rtt: Double, offset: Double, at: Double)?, _ answered: Int,
                                _ phase: String) -> ClockOffset? {
        guard let best else { return nil }
        return ClockOffset(phase: phase, offsetMs: best.offset / 1e6, uncertaintyMs: best.rtt / 2e6, samples: answered,
                           atMicros: Int64(best.at / 1000))
    }

    private static func wallNanos() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) * 1e9 + Double(ts.tv_nsec)
    }
}
