import Foundation
import LabControl
import LabKit
import LabTestSupport
import SyncProtocol
import ZeroMQ

/// A real `synclab-broker` process for end-to-end tests: started from the built executable in a fresh temporary
/// folder, killed and reaped by `stop()` (call it in a `defer`) or when released.
final class BrokerProcess {
    let folder = TempFolder()
    private let child: ChildProcess
    private(set) var listen = ""
    private(set) var notices = ""
    private(set) var control = ""

    var eventsPath: String { folder.file("events.jsonl") }

    /// Writes an accounts file of `devices` (id, platform, token) in account `acme` and starts the broker bound to
    /// ephemeral TCP ports (the device socket to `listen`) with `extra` flags; returns once its `process.started`
    /// event names the endpoints.
    init(devices: [(String, Platform, String)], listen: String = "tcp://127.0.0.1:*", extra: [String] = [],
         timeout: Double = 20) throws {
        let list = devices.map { #"{"id": "\#($0.0)", "platform": "\#($0.1.rawValue)", "token": "\#($0.2)"}"# }
        let accounts = #"{"accounts": [{"id": "acme", "devices": [\#(list.joined(separator: ", "))]}]}"#
        try accounts.write(toFile: folder.file("accounts.json"), atomically: true, encoding: .utf8)

        child = try ChildProcess(try Binaries.path("synclab-broker"), [
            "--listen", listen, "--notices", "tcp://127.0.0.1:*", "--control", "tcp://127.0.0.1:*",
            "--accounts", folder.file("accounts.json"), "--events", folder.file("events.jsonl"),
        ] + extra, stdout: nil, stderr: folder.file("stderr.txt"))

        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let started = events(of: "process.started").first {
                self.listen = started["listen"]?.stringValue ?? ""
                notices = started["notices"]?.stringValue ?? ""
                control = started["control"]?.stringValue ?? ""
                return
            }
            guard child.isRunning else { break }
            usleep(20_000)
        }
        stop()
        throw TestFailure("synclab-broker did not start: \(stderrText)")
    }

    /// The lab's control client on `--control`, playing the launcher (it keeps the ack of `stop`).
    func controlClient(_ context: Context) throws -> ControlClient {
        try ControlClient(context: context, name: "synclab-broker", endpoint: control, liveOnly: false)
    }

    var stderrText: String { child.errors }

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

    /// Sends SIGTERM and waits up to `timeout` seconds; returns the exit status (nil: it is still running).
    func terminate(timeout: Double = 10) -> Int32? {
        child.signal(SIGTERM)
        return waitForExit(timeout: timeout)
    }

    func waitForExit(timeout: Double) -> Int32? { child.wait(timeout: timeout) }

    /// Kills the process if it still runs and reaps it (its folder goes when the test lets go of it).
    func stop() { child.killNow() }
}
