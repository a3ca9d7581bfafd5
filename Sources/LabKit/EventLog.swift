import Foundation
import SyncProtocol

/// Appends events to a JSON-lines file, one `write(2)` per event, so what a process did before a SIGKILL is in the
/// file (the kernel holds the bytes once write returns). Every line has `wall` (µs), `sim` (s), `proc` and `type`.
///
/// `@unchecked Sendable`: the file descriptor is only written with whole-line `write` calls under a lock.
public final class EventLog: @unchecked Sendable {
    public let process: String
    public let clock: SimClock
    private let fd: Int32
    private let lock = NSLock()
    private let echo: Bool
    /// `process` as a JSON string, written once: it is the same on every line.
    private let processJSON: [UInt8]
    private static let wallPrefix = Array("{\"wall\":".utf8)
    private static let simPrefix = Array(",\"sim\":".utf8)
    private static let procPrefix = Array(",\"proc\":".utf8)
    private static let typePrefix = Array(",\"type\":".utf8)
    private static let lineEnd = Array("}\n".utf8)

    /// Opens (creating, appending) `path`; nil path means events go nowhere but `echo` to stderr.
    public init(path: String?, process: String, clock: SimClock, echo: Bool = false) throws {
        self.process = process
        self.clock = clock
        self.echo = echo
        var processJSON: [UInt8] = []
        JSONValue.writeString(process, to: &processJSON)
        self.processJSON = processJSON
        if let path {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw LabError.io("cannot open event log \(path): \(String(cString: strerror(errno)))")
            }
            self.fd = fd
        } else {
            self.fd = -1
        }
    }

    /// Lines emitted while held, not yet written.
    private var pending: [UInt8] = []
    private var holdDepth = 0

    deinit {
        if !pending.isEmpty && fd >= 0 { writeAll(fd, pending) }
        if fd >= 0 { close(fd) }
    }

    /// Keeps the lines emitted from now on in memory until `flush()` or the matching `release()`, then writes them
    /// with one `write(2)`. The holder must flush before anything those events describe becomes visible outside the
    /// process (a reply, a notice, a hint): an event is then on disk before its effect, which is the promise one write
    /// per event keeps, at one system call per batch. A SIGKILL while held loses only events of effects that nobody
    /// outside has seen yet; the databases, not the events, are what the checks trust for those.
    public func hold() {
        lock.lock()
        holdDepth += 1
        lock.unlock()
    }

    /// Ends one `hold()`; the outermost release writes what is pending.
    public func release() {
        lock.lock()
        defer { lock.unlock() }
        holdDepth = max(0, holdDepth - 1)
        if holdDepth == 0 { writePending() }
    }

    /// Writes what is pending now (before a send), staying held.
    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        writePending()
    }

    private func writePending() {
        guard !pending.isEmpty else { return }
        if fd >= 0 { writeAll(fd, pending) }
        pending.removeAll(keepingCapacity: true)
    }

    /// Records an event of `type` with `fields` (in order, after the four standard ones).
    public func emit(_ type: String, _ fields: [(String, JSONValue)] = []) {
        // A process started without an event file (a bench, a hand run) does not pay for lines nobody reads.
        guard fd >= 0 || echo else { return }
        let wall = SimClock.wallMicros()
        lock.lock()
        defer { lock.unlock() }
        // Built as bytes, not a String, straight onto the pending lines: the line costs a few appends per field,
        // which matters when every hint and every op writes one (the broker spent half its time building event
        // lines as Strings). The bytes are moved out of the property and back, so each append is a local one.
        var line = pending
        pending = []
        let start = line.count
        line.append(contentsOf: Self.wallPrefix)
        JSONValue.writeInteger(Int(wall), to: &line)
        line.append(contentsOf: Self.simPrefix)
        Self.writeSim((clock.sim(atWall: wall) * 1000).rounded(), to: &line)
        line.append(contentsOf: Self.procPrefix)
        line.append(contentsOf: processJSON)
        line.append(contentsOf: Self.typePrefix)
        JSONValue.writeString(type, to: &line)
        for (key, value) in fields {
            line.append(UInt8(ascii: ","))
            JSONValue.writeString(key, to: &line)
            line.append(UInt8(ascii: ":"))
            value.write(to: &line)
        }
        line.append(contentsOf: Self.lineEnd)
        pending = line
        if echo { Output.stderr(String(decoding: pending[start...], as: UTF8.self)) }
        if holdDepth == 0 { writePending() }
    }

    /// Writes `millis / 1000` (`millis` a whole number) as `JSONValue.double(millis / 1000)` writes it, without
    /// formatting a Double: at most three decimals, trailing zeros dropped. Far-off values take the general path.
    static func writeSim(_ millis: Double, to line: inout [UInt8]) {
        guard millis.isFinite, abs(millis) < 1e12 else {
            JSONValue.double(millis / 1000).write(to: &line)
            return
        }
        let whole = Int(millis)
        let magnitude = whole.magnitude
        var fraction = Int(magnitude % 1000)
        if whole < 0 && fraction != 0 {
            // -0.5 has no negative whole part to carry the sign.
            line.append(UInt8(ascii: "-"))
            JSONValue.writeInteger(Int(magnitude / 1000), to: &line)
        } else {
            JSONValue.writeInteger(whole / 1000, to: &line)
        }
        guard fraction != 0 else { return }
        line.append(UInt8(ascii: "."))
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        var divisor = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            line.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
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

    public var description: String {
        switch self {
        case .io(let s), .usage(let s), .config(let s): return s
        }
    }
}
