import Foundation
import LabKit
import SyncProtocol

/// The simulated run's `events.jsonl`, written in the order events happen (one process, one clock): every line has
/// `wall` (the run's epoch plus virtual time, µs), `sim`, `proc` and `type`, then the fields, in the format
/// `EventLog` writes. Lines are buffered and written in large blocks; `close()` writes the rest.
public final class SimEventLog {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private let clock: SimClock
    private let scheduler: SimScheduler
    /// How many lines were written.
    public private(set) var count = 0

    public init(path: String, clock: SimClock, scheduler: SimScheduler) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LabError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        self.clock = clock
        self.scheduler = scheduler
        buffer.reserveCapacity(1 << 20)
    }

    deinit { close() }

    /// Records an event of process `proc` at the scheduler's now.
    public func emit(_ proc: String, _ type: String, _ fields: [(String, JSONValue)] = []) {
        let wall = clock.epochMicros + scheduler.now
        let simMillis = (clock.sim(atWall: wall) * 1000).rounded()
        buffer.append(contentsOf: "{\"wall\":".utf8)
        JSONValue.int(Int(wall)).write(to: &buffer)
        buffer.append(contentsOf: ",\"sim\":".utf8)
        JSONValue.double(simMillis / 1000).write(to: &buffer)
        buffer.append(contentsOf: ",\"proc\":".utf8)
        JSONValue.string(proc).write(to: &buffer)
        buffer.append(contentsOf: ",\"type\":".utf8)
        JSONValue.string(type).write(to: &buffer)
        for (key, value) in fields {
            buffer.append(UInt8(ascii: ","))
            JSONValue.string(key).write(to: &buffer)
            buffer.append(UInt8(ascii: ":"))
            value.write(to: &buffer)
        }
        buffer.append(contentsOf: "}\n".utf8)
        count += 1
        if buffer.count >= 1 << 20 { flush() }
    }

    public func flush() {
        guard fd >= 0, !buffer.isEmpty else { return }
        buffer.withUnsafeBufferPointer { pointer in
            var offset = 0
            while offset < pointer.count {
                let n = write(fd, pointer.baseAddress! + offset, pointer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    break
                }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private var closed = false

    public func close() {
        guard !closed else { return }
        closed = true
        flush()
        if fd >= 0 { Foundation.close(fd) }
    }
}
