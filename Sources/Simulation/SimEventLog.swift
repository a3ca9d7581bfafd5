import Foundation
import LabKit
import SyncDevice
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

    /// Records an event of the catalogue for process `proc`.
    public func emit(_ proc: String, _ type: EventType, _ fields: [(String, JSONValue)] = []) {
        emit(proc, type.name, fields)
    }

    /// Records an event of process `proc` at the scheduler's now.
    public func emit(_ proc: String, _ type: String, _ fields: [(String, JSONValue)] = []) {
        writeStart(proc)
        JSONValue.string(type).write(to: &buffer)
        for (key, value) in fields {
            buffer.append(UInt8(ascii: ","))
            JSONValue.string(key).write(to: &buffer)
            buffer.append(UInt8(ascii: ":"))
            value.write(to: &buffer)
        }
        writeEnd()
    }

    /// Records a typed event of process `proc` (a pass's, `PassEvent`): its type's name as its lines spell it, then
    /// the fields `write` adds, as `emit(_:_:_:)` would write them from a field list.
    public func emit(_ proc: String, _ type: EventType.Quoted, _ write: (inout EventBytes) -> Void) {
        writeStart(proc)
        buffer.append(contentsOf: type.bytes)
        // The sink takes the buffer and gives it back: swapped, never copied.
        var sink = EventBytes([])
        swap(&sink.bytes, &buffer)
        write(&sink)
        swap(&sink.bytes, &buffer)
        writeEnd()
    }

    /// `{"wall":…,"sim":…,"proc":…,"type":`.
    private func writeStart(_ proc: String) {
        let wall = clock.epochMicros + scheduler.now
        let simMillis = (clock.sim(atWall: wall) * 1000).rounded()
        buffer.append(contentsOf: "{\"wall\":".utf8)
        JSONValue.int(Int(wall)).write(to: &buffer)
        buffer.append(contentsOf: ",\"sim\":".utf8)
        JSONValue.double(simMillis / 1000).write(to: &buffer)
        buffer.append(contentsOf: ",\"proc\":".utf8)
        JSONValue.string(proc).write(to: &buffer)
        buffer.append(contentsOf: ",\"type\":".utf8)
    }

    private func writeEnd() {
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

/// One process's events held during a step, as `EventLog.hold` holds a real process's: written at the step's end or
/// when something leaves the process (`flush`), and lost with it when it dies first (`drop`, a SIGKILL).
final class HeldEvents {
    private let log: SimEventLog
    private let proc: String
    private var depth = 0
    private var lines: [Held] = []

    /// An event held: a field list, or a pass's typed event.
    private enum Held {
        case line(type: String, fields: [(String, JSONValue)])
        case pass(PassEvent)
    }

    init(_ log: SimEventLog, proc: String) {
        self.log = log
        self.proc = proc
    }

    func emit(_ type: String, _ fields: [(String, JSONValue)]) {
        if depth > 0 { lines.append(.line(type: type, fields: fields)) } else { log.emit(proc, type, fields) }
    }

    func emit(_ event: PassEvent) {
        if depth > 0 { lines.append(.pass(event)) } else { write(event) }
    }

    func hold() { depth += 1 }

    func release() {
        depth -= 1
        if depth == 0 { flush() }
    }

    func flush() {
        for held in lines {
            switch held {
            case let .line(type, fields): log.emit(proc, type, fields)
            case let .pass(event): write(event)
            }
        }
        lines.removeAll()
    }

    /// The process died: what it held was never written.
    func drop() { lines.removeAll() }

    private func write(_ event: PassEvent) {
        log.emit(proc, event.quoted) { event.write(to: &$0) }
    }
}
