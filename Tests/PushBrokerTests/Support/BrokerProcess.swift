import Foundation
import LabControl
import LabKit
import SyncProtocol
import ZeroMQ

/// A real `synclab-broker` process for end-to-end tests: started from the built executable in a fresh temporary
/// folder, killed and reaped by `stop()` (call it in a `defer`).
final class BrokerProcess {
    let folder: URL
    let process = Process()
    private(set) var listen = ""
    private(set) var notices = ""
    private(set) var control = ""

    var eventsPath: String { folder.appendingPathComponent("events.jsonl").path }
    var stderrPath: String { folder.appendingPathComponent("stderr.txt").path }

    /// The folder holding the built executables: `SYNCLAB_BIN`, else the folder of the running test binary.
    static func binaryFolder() -> URL {
        if let path = ProcessInfo.processInfo.environment["SYNCLAB_BIN"] {
            return URL(fileURLWithPath: path)
        }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // On macOS the test binary sits inside an .xctest bundle; walk up to the build folder.
        while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        return url
    }

    static func executable(_ name: String) throws -> URL {
        let url = binaryFolder().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw TestFailure("\(url.path) is missing: build it first (swift build --product \(name)) "
                + "or set SYNCLAB_BIN")
        }
        return url
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("synclab-broker-test-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes an accounts file of `devices` (id, platform, token) in account `acme` and starts the broker bound to
    /// ephemeral TCP ports (the device socket to `listen`) with `extra` flags; returns once its `process.started`
    /// event names the endpoints.
    init(devices: [(String, Platform, String)], listen: String = "tcp://127.0.0.1:*", extra: [String] = [],
         timeout: Double = 20) throws {
        folder = try Self.temporaryFolder()
        let list = devices.map { #"{"id": "\#($0.0)", "platform": "\#($0.1.rawValue)", "token": "\#($0.2)"}"# }
        let accounts = #"{"accounts": [{"id": "acme", "devices": [\#(list.joined(separator: ", "))]}]}"#
        let accountsPath = folder.appendingPathComponent("accounts.json")
        try Data(accounts.utf8).write(to: accountsPath)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)

        process.executableURL = try Self.executable("synclab-broker")
        process.arguments = [
            "--listen", listen, "--notices", "tcp://127.0.0.1:*", "--control", "tcp://127.0.0.1:*",
            "--accounts", accountsPath.path, "--events", eventsPath,
        ] + extra
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()

        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let started = events(of: "process.started").first {
                self.listen = started["listen"]?.stringValue ?? ""
                notices = started["notices"]?.stringValue ?? ""
                control = started["control"]?.stringValue ?? ""
                return
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        stop()
        throw TestFailure("synclab-broker did not start: \(stderrText)")
    }

    /// The lab's control client on `--control`, playing the launcher (it keeps the ack of `stop`).
    func controlClient(_ context: Context) throws -> ControlClient {
        try ControlClient(context: context, name: "synclab-broker", endpoint: control, liveOnly: false)
    }

    var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// The events the broker wrote so far, parsed.
    func events(of type: String? = nil) -> [JSONValue] {
        guard let text = try? String(contentsOfFile: eventsPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            if let type, !line.contains("\"type\":\"\(type)\"") { return nil }
            return try? JSONValue.parse(String(line))
        }
    }

    /// Counts events by type without parsing every line.
    func eventCounts() -> [String: Int] {
        guard let text = try? String(contentsOfFile: eventsPath, encoding: .utf8) else { return [:] }
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let start = line.range(of: "\"type\":\"")?.upperBound,
                let end = line[start...].firstIndex(of: "\"")
            else { continue }
            counts[String(line[start..<end]), default: 0] += 1
        }
        return counts
    }

    /// Sends SIGTERM and waits up to `timeout` seconds; returns the exit status (nil: it had to be killed).
    func terminate(timeout: Double = 10) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        return waitForExit(timeout: timeout)
    }

    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        return process.terminationStatus
    }

    /// Kills the process if it still runs, reaps it and removes its folder (kept when `SYNCLAB_KEEP_TEST_FOLDERS` is
    /// set, to read the events of a failed test).
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if ProcessInfo.processInfo.environment["SYNCLAB_KEEP_TEST_FOLDERS"] == nil {
            try? FileManager.default.removeItem(at: folder)
        }
    }
}
