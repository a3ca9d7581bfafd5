import Foundation
import LabKit
import SyncProtocol

/// The folder a run writes: `topology.json5` (as run), `run.json` (seed, scale, epoch), `accounts.json`,
/// `events/` (one file per process), `events.jsonl` (all of them merged in time order), `logs/`, the SQLite files,
/// `stats.json` and the reports.
public struct RunFolder: Sendable {
    public let root: String
    /// ipc socket paths must stay under ~100 bytes, so sockets live in a short temporary folder.
    public let socketDirectory: String

    public init(root: String) {
        self.root = root
        self.socketDirectory = "/tmp/synclab-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// `runs/NAME-YYYYMMDD-HHMMSS` below `base`, with `runs/latest` pointing at it.
    public static func timestamped(base: String, name: String) -> RunFolder {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        var root = "\(base)/\(name)-\(formatter.string(from: Date()))"
        var suffix = 2
        while FileManager.default.fileExists(atPath: root) {
            root = "\(base)/\(name)-\(formatter.string(from: Date()))-\(suffix)"
            suffix += 1
        }
        return RunFolder(root: root)
    }

    public func path(_ name: String) -> String { "\(root)/\(name)" }
    public var accountsPath: String { path("accounts.json") }
    public func eventsPath(for process: String) -> String { path("events/\(process).jsonl") }
    public func logPath(for process: String) -> String { path("logs/\(process).log") }
    public func devicePath(_ device: String) -> String { path("devices/\(device).sqlite") }

    func create(topologyText: String, topology: Topology, clock: SimClock) throws {
        let fm = FileManager.default
        for folder in [root, path("events"), path("logs"), path("devices"), socketDirectory] {
            try fm.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                   attributes: [.posixPermissions: 0o700])
        }
        // A folder given with --out may already exist with a wider mode; nothing is in it yet.
        chmod(root, 0o700)
        write("topology.json5", topologyText)
        let run: JSONValue = .object([
            ("name", .string(topology.name)), ("seed", .int(Int(topology.seed))), ("timeScale",
                .double(topology.timeScale)),
            ("epochMicros", .int(Int(clock.epochMicros))), ("duration", .double(topology.duration)),
            ("ignoreExpect", .bool(topology.expectIgnored)),
        ])
        write("run.json", run.description + "\n")
        let accounts: JSONValue = .object([("accounts", .array(topology.accounts.map { account in
            .object([("id", .string(account.id)), ("devices", .array(account.devices.map { device in
                .object([("id", .string(device.id)), ("platform", .string(device.platform.rawValue)),
                         ("token", .string(device.token))])
            }))])
        }))])
        write("accounts.json", accounts.description + "\n")
        // runs/latest → this run, when the run folder sits in a runs/ folder.
        let parent = (root as NSString).deletingLastPathComponent
        let latest = "\(parent)/latest"
        try? fm.removeItem(atPath: latest)
        try? fm.createSymbolicLink(atPath: latest, withDestinationPath: (root as NSString).lastPathComponent)
    }

    func write(_ name: String, _ text: String) {
        _ = FileManager.default.createFile(atPath: path(name), contents: Data(text.utf8))
    }

    func eventFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path("events"))) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { path("events/\($0)") }
    }

    /// Merges every process's events into `events.jsonl`, ordered by `wall` (stable within a process), and removes
    /// the socket folder. A torn last line of a SIGKILLed process is skipped. `corrections` (by process, the name of
    /// its events file) put a host's events on the launcher's clock: their `wall` and `sim` are rewritten on `clock`
    /// in `events.jsonl`; `events/NAME.jsonl` keep the host's own times.
    func mergeEvents(corrections: [String: ClockCorrection] = [:], clock: SimClock? = nil) {
        var lines: [(wall: Int64, file: Int, index: Int, text: Substring)] = []
        for (fileIndex, file) in eventFiles().enumerated() {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let process = String((file as NSString).lastPathComponent.dropLast(6))
            let correction = clock == nil ? nil : corrections[process].flatMap { $0.applied ? $0 : nil }
            for (index, line) in text.split(separator: "\n").enumerated() {
                guard line.hasPrefix("{\"wall\":"), line.hasSuffix("}") else { continue }
                let digits = line.dropFirst(8).prefix(while: { $0.isNumber })
                let wall = Int64(digits) ?? 0
                if let correction, let clock {
                    let moved = Self.corrected(line, wall: wall, by: correction, clock: clock)
                    lines.append((correction.corrected(wall), fileIndex, index, moved))
                } else {
                    lines.append((wall, fileIndex, index, line))
                }
            }
        }
        lines.sort { ($0.wall, $0.file, $0.index) < ($1.wall, $1.file, $1.index) }
        var out = ""
        out.reserveCapacity(lines.reduce(0) { $0 + $1.text.utf8.count + 1 })
        for line in lines {
            out += line.text
            out += "\n"
        }
        write("events.jsonl", out)
        try? FileManager.default.removeItem(atPath: socketDirectory)
    }
}
