import Foundation
import Synchronization
import SyncProtocol

/// Appends events to a JSON-lines file, one `write(2)` per event, so what a process did before a SIGKILL is in the
/// file (the kernel holds the bytes once write returns). Every line has `wall` (µs), `sim` (s), `proc` and `type`.
///
/// `@unchecked Sendable`: the file descriptor is only written with whole-line `write` calls under the lock (`state`).
public final class EventLog: EventEmitter, @unchecked Sendable {
    public let process: String
    public let clock: SimClock
    private let echo: Bool
    /// `,"proc":"<process>","type":"`, the same on every line, written once.
    private let procJSON: [UInt8]
    /// The file and the lines not written yet: this log's own, or another's it shares (`init(sharing:process:)`).
    private let output: EventOutput
    private var fd: Int32 { output.fd }

    /// Opens (creating, appending) `path`; nil path means events go nowhere but `echo` to stderr.
    public init(path: String?, process: String, clock: SimClock, echo: Bool = false) throws {
        self.process = process
        self.clock = clock
        self.echo = echo
        procJSON = Self.procJSON(process)
        if let path {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw LabError.io("cannot open event log \(path): \(String(cString: strerror(errno)))")
            }
            output = EventOutput(fd: fd)
        } else {
            output = EventOutput(fd: -1)
        }
    }

    /// A log of `process`'s own that writes into `log`'s file and pending lines (a pool's devices into the pool's):
    /// one hold, one flush and one `write(2)` for the lines of all the logs that share them.
    public init(sharing log: EventLog, process: String) {
        self.process = process
        clock = log.clock
        echo = log.echo
        procJSON = Self.procJSON(process)
        output = log.output
    }

    private static func procJSON(_ process: String) -> [UInt8] {
        var procJSON = Array(",\"proc\":".utf8)
        JSONValue.writeString(process, to: &procJSON)
        procJSON.append(contentsOf: ",\"type\":".utf8)
        return procJSON
    }

    /// What the lock guards: the lines emitted while held, not yet written, and how deep the hold is. A `Mutex`
    /// hands them to the line being written as one `inout`, with no exclusivity check of a stored property besides.
    /// `@unchecked Sendable`: its bytes are only ever reached through `state`'s lock.
    fileprivate struct Pending: ~Copyable, @unchecked Sendable {
        var lines = EventFields()
        var holdDepth = 0
    }

    /// Keeps the lines emitted from now on in memory until `flush()` or the matching `release()`, then writes them
    /// with one `write(2)`. The holder must flush before anything those events describe becomes visible outside the
    /// process (a reply, a notice, a hint): an event is then on disk before its effect, which is the promise one write
    /// per event keeps, at one system call per batch. A SIGKILL while held loses only events of effects that nobody
    /// outside has seen yet; the databases, not the events, are what the checks trust for those.
    public func hold() {
        output.state.withLock { $0.holdDepth += 1 }
    }

    /// Ends one `hold()`; the outermost release writes what is pending.
    public func release() {
        output.state.withLock { pending in
            pending.holdDepth = max(0, pending.holdDepth - 1)
            if pending.holdDepth == 0 { writePending(&pending) }
        }
    }

    /// Writes what is pending now (before a send), staying held.
    public func flush() {
        output.state.withLock { writePending(&$0) }
    }

    private func writePending(_ pending: inout Pending) { output.writePending(&pending) }

    /// Records an event of `type` with `fields` (in order, after the four standard ones).
    public func emit(_ type: String, _ fields: [(String, JSONValue)] = []) {
        emitLine { line in
            line.appendString(type)
            for (key, value) in fields {
                line.appendKey(key)
                line.appendValue(value)
            }
        }
    }

    /// Records an event of `type` whose fields `fields` adds, in order, after the four standard ones: the line is
    /// written straight into the pending bytes, with no field list built. For the events of every hint, op and page.
    /// `fields` runs under the log's lock: it must not emit.
    public func emit(_ type: StaticString, _ fields: (inout EventFields) -> Void) {
        emitLine { line in
            assert(EventFields.isPlainName(type), "event type \(type) must be a plain ASCII name")
            line.append(UInt8(ascii: "\""))
            line.appendStatic(type)
            line.append(UInt8(ascii: "\""))
            fields(&line)
        }
    }

    /// The same for an event of the catalogue (`events.emit(.hintDelivered) { … }`).
    public func emit(_ type: EventType, _ fields: (inout EventFields) -> Void) {
        emit(type.quoted, fields)
    }

    /// The same with the type's name kept by the emitter (`EventType.quoted`), for the lines of every hint.
    public func emit(_ type: EventType.Quoted, _ fields: (inout EventFields) -> Void) {
        emitLine { line in
            line.append(type.bytes)
            fields(&line)
        }
    }

    /// Writes `{"wall":…,"sim":…,"proc":…,"type":`, then what `body` adds (the type and the fields), then `}` and a
    /// newline, onto the pending lines; writes them out unless held.
    private func emitLine(_ body: (inout EventFields) -> Void) {
        // A process started without an event file (a bench, a hand run) does not pay for lines nobody reads.
        guard fd >= 0 || echo else { return }
        let wall = SimClock.wallMicros()
        let simMillis = (clock.sim(atWall: wall) * 1000).rounded()
        output.state.withLock { pending in
            Self.writeLine(wall: Int(wall), simMillis: simMillis, procJSON: procJSON, echo: echo, body: body,
                           to: &pending.lines)
            if pending.holdDepth == 0 { writePending(&pending) }
        }
    }

    private static func writeLine(wall: Int, simMillis: Double, procJSON: [UInt8], echo: Bool,
                                  body: (inout EventFields) -> Void, to line: inout EventFields) {
        let start = line.count
        line.appendStamp(wall: wall, simMillis: simMillis)
        line.append(procJSON)
        body(&line)
        line.appendLineEnd()
        if echo { Output.stderr(String(decoding: line.bytes(from: start), as: UTF8.self)) }
    }

    /// Writes `millis / 1000` (`millis` a whole number) as `JSONValue.double(millis / 1000)` writes it, without
    /// formatting a Double: at most three decimals, trailing zeros dropped. Far-off values take the general path.
    static func writeSim(_ millis: Double, to line: inout EventFields) {
        guard millis.isFinite, abs(millis) < 1e12 else {
            line.appendValue(.double(millis / 1000))
            return
        }
        line.appendThousandths(Int(millis))
    }

    /// `writeSim` onto an array (for tests).
    static func writeSim(_ millis: Double, to bytes: inout [UInt8]) {
        var line = EventFields(capacity: 32)
        writeSim(millis, to: &line)
        bytes.append(contentsOf: line.bytes(from: 0))
    }
}

/// An event file and the lines not written to it yet, shared by the logs that write into it; written and closed when
/// the last of them goes.
private final class EventOutput: @unchecked Sendable {
    let fd: Int32
    let state = Mutex(EventLog.Pending())

    init(fd: Int32) { self.fd = fd }

    deinit {
        state.withLock { writePending(&$0) }
        if fd >= 0 { close(fd) }
    }

    func writePending(_ pending: inout EventLog.Pending) {
        guard pending.lines.count > 0 else { return }
        if fd >= 0 { writeAll(fd, pending.lines.bytes(from: 0)) }
        pending.lines.removeAll()
    }
}

func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { writeAll(fd, $0) }
}

func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { writeAll(fd, $0) }
}

/// Writes all of `buffer`, going on after a short write or an interrupted one.
func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) {
    guard let base = buffer.baseAddress else { return }
    var offset = 0
    while offset < buffer.count {
        let n = write(fd, base + offset, buffer.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += n
    }
}

/// Writing to the standard streams without the `stderr` global, which Swift 6 refuses.
public enum Output {
    public static func stderr(_ text: String) { writeAll(2, text) }
    public static func stdout(_ text: String) { writeAll(1, text) }
}

/// Errors of the lab's shared plumbing.
public enum LabError: Error, CustomStringConvertible, Sendable {
    case io(String)
    case usage(String)
    case config(String)
    /// SIGINT or SIGTERM asked the run to stop (Ctrl-C): not a mistake of anyone's.
    case interrupted

    public var description: String {
        switch self {
        case .io(let s), .usage(let s), .config(let s): return s
        case .interrupted: return "interrupted"
        }
    }
}
