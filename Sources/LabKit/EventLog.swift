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

    /// Opens (creating, appending) `path`; nil path means events go nowhere but `echo` to stderr.
    public init(path: String?, process: String, clock: SimClock, echo: Bool = false) throws {
        self.process = process
        self.clock = clock
        self.echo = echo
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

    deinit { if fd >= 0 { close(fd) } }

    /// Records an event of `type` with `fields` (in order, after the four standard ones).
    public func emit(_ type: String, _ fields: [(String, JSONValue)] = []) {
        let wall = SimClock.wallMicros()
        var line = "{\"wall\":\(wall),\"sim\":"
        JSONValue.double((clock.sim(atWall: wall) * 1000).rounded() / 1000).write(to: &line)
        line += ",\"proc\":"
        JSONValue.string(process).write(to: &line)
        line += ",\"type\":"
        JSONValue.string(type).write(to: &line)
        for (key, value) in fields {
            line += ","
            JSONValue.string(key).write(to: &line)
            line += ":"
            value.write(to: &line)
        }
        line += "}\n"
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 { writeAll(fd, line) }
        if echo { Output.stderr(line) }
    }
}

func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
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
