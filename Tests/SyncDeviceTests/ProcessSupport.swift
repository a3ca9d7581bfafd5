import Foundation
import LabControl
import LabKit
import SyncProtocol
import ZeroMQ

/// Where the built executables are: `SYNCLAB_BIN`, else the folder holding the running test binary's products.
enum Binaries {
    static var directory: String {
        if let bin = ProcessInfo.processInfo.environment["SYNCLAB_BIN"] { return bin }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("synclab-device").path) {
                return url.path
            }
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().path
    }

    static func path(_ name: String) -> String { "\(directory)/\(name)" }
    static func exists(_ name: String) -> Bool { FileManager.default.isExecutableFile(atPath: path(name)) }

    /// The server and broker are built by other issues; an end-to-end test needs both to be real.
    static var rolesBuilt: Bool {
        guard exists("synclab-server") && exists("synclab-broker") else { return false }
        // A placeholder main answers --help too, but only a real role has a --listen flag.
        let server = run("synclab-server", ["--help"])
        let broker = run("synclab-broker", ["--help"])
        return server.status == 0 && server.output.contains("--listen")
            && broker.status == 0 && broker.output.contains("--listen")
    }

    /// Runs an executable to completion (bounded) and returns its status and output.
    static func run(_ name: String, _ arguments: [String], limit: Double = 20) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path(name))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// A fresh folder per test, removed at the end.
final class TempFolder {
    let url: URL
    init() throws {
        url = URL(fileURLWithPath: "/tmp").appendingPathComponent("sld-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    /// An ipc endpoint inside the folder (short enough for a unix socket path).
    func endpoint(_ name: String) -> String { "ipc://\(path(name)).sock" }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A child process the test owns: killed with SIGKILL and reaped when the test ends, whatever happens.
final class Child {
    let name: String
    let arguments: [String]
    let logPath: String
    private(set) var process: Process?

    init(_ name: String, _ arguments: [String], log: String) {
        self.name = name
        self.arguments = arguments
        self.logPath = log
    }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path(name))
        process.arguments = arguments
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
    }

    var running: Bool { process?.isRunning ?? false }

    /// SIGKILL and reap.
    func kill9() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits up to `limit` seconds for the process to exit by itself; returns its status (nil: still running).
    func waitExit(limit: Double) -> Int32? {
        guard let process else { return nil }
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { return nil }
        return process.terminationStatus
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    deinit { kill9() }
}

/// The lab's control client on a test's process (it keeps the ack of `stop`: `liveOnly: false`).
func controlClient(_ context: Context, endpoint: String) throws -> ControlClient {
    try ControlClient(context: context, endpoint: endpoint, liveOnly: false)
}

extension ControlClient {
    /// The ack's data (an empty object when it has none), or nil when no ack came.
    func data(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = 5_000) throws -> JSONValue? {
        try ack(command, args, timeoutMs: timeoutMs).map { $0.data ?? .object([]) }
    }
}

/// Raw frames to a control socket (malformed-input tests): the first reply, decoded; nil when none came.
func rawControl(_ context: Context, endpoint: String, _ frames: [[UInt8]], timeoutMs: Int = 3_000) throws -> Message? {
    let socket = try Socket(context, .dealer)
    defer { socket.close() }
    try socket.connect(endpoint)
    let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1_000)
    while try !socket.send(frames, dontWait: true) {
        guard Date() < deadline else { return nil }
        usleep(5_000)
    }
    var poller = Poller([socket])
    while Date() < deadline {
        guard try !poller.poll(timeoutMs: 50).isEmpty, let reply = try socket.receive(dontWait: true) else { continue }
        return try? Codec.decode(reply)
    }
    return nil
}

/// Reads an events file.
func readEvents(_ path: String) -> [JSONValue] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
}

/// Counts events of one type in a growing events file, reading only what was appended since the last look.
final class EventCounter {
    let path: String
    let needle: [UInt8]
    private var offset: UInt64 = 0
    private(set) var count = 0
    private var carry: [UInt8] = []

    init(path: String, type: String) {
        self.path = path
        needle = Array("\"type\":\"\(type)\"".utf8)
    }

    /// Reads what was appended and returns the total count so far.
    @discardableResult
    func update() -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return count }
        defer { try? handle.close() }
        handle.seek(toFileOffset: offset)
        let data = handle.readDataToEndOfFile()
        offset += UInt64(data.count)
        var bytes = carry + [UInt8](data)
        // Keep an unfinished line for the next look.
        if let lastNewline = bytes.lastIndex(of: 0x0A) {
            carry = Array(bytes[(lastNewline + 1)...])
            bytes = Array(bytes[...lastNewline])
        } else {
            carry = bytes
            return count
        }
        for line in bytes.split(separator: 0x0A) where line.count >= needle.count {
            let array = Array(line)
            for start in 0...(array.count - needle.count) where array[start] == needle[0] {
                if Array(array[start..<(start + needle.count)]) == needle {
                    count += 1
                    break
                }
            }
        }
        return count
    }
}
