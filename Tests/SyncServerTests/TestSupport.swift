import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder for one test, removed when the test lets go of it. Short paths, so `ipc://` endpoints fit.
final class TempFolder {
    let path: String

    init() {
        var template = Array("/tmp/sls-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = made.map { String(cString: $0) } ?? "/tmp/sls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        if made == nil { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
    func ipc(_ name: String) -> String { "ipc://" + file(name) }
}

enum TestFailure: Error, CustomStringConvertible {
    case setup(String)
    var description: String {
        switch self {
        case .setup(let text): return text
        }
    }
}

/// Where the package's executables are: `SYNCLAB_BIN` if set, else next to the running test binary.
enum Binaries {
    static func path(_ name: String) throws -> String {
        var folders: [URL] = []
        if let folder = ProcessInfo.processInfo.environment["SYNCLAB_BIN"] {
            folders.append(URL(fileURLWithPath: folder))
        }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        var bundle = Bundle.main.bundleURL
        for _ in 0..<3 {
            folders.append(bundle)
            bundle = bundle.deletingLastPathComponent()
        }
        for folder in folders {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestFailure.setup("no \(name) next to the tests (looked in \(folders.map(\.path))): build it first "
            + "(swift build --product \(name)) or set SYNCLAB_BIN")
    }
}

/// A real child process started with posix_spawn, its stdout and stderr appended to a log file. Killed and reaped
/// when released, so no test leaves one behind.
final class ChildProcess {
    let pid: pid_t
    private(set) var exitStatus: Int32?

    init(_ path: String, _ arguments: [String], log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw TestFailure.setup("posix_spawn \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 10)
        }
    }

    func signal(_ signal: Int32) { if exitStatus == nil { kill(pid, signal) } }

    /// Waits up to `timeout` seconds; the exit code (128 + signal when killed), or nil if it is still running.
    @discardableResult
    func wait(timeout: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
                exitStatus = signaled ? 128 + (status & 0x7f) : (status >> 8) & 0xff
                return exitStatus
            }
            if rc < 0 && errno != EINTR { return nil }
            if Date() > deadline { return nil }
            usleep(2_000)
        }
    }

    /// SIGKILL and reap.
    func killNow() {
        signal(SIGKILL)
        wait(timeout: 10)
    }
}

/// A device-side DEALER with timeouts, speaking the wire protocol.
final class TestClient {
    let context: Context
    let endpoint: String
    private(set) var socket: Socket
    private var nextReq = 0

    init(_ context: Context, endpoint: String) throws {
        self.context = context
        self.endpoint = endpoint
        socket = try TestClient.connect(context, endpoint)
    }

    private static func connect(_ context: Context, _ endpoint: String) throws -> Socket {
        let socket = try Socket(context, .dealer)
        try socket.setReconnectInterval(ms: 10)
        try socket.connect(endpoint)
        return socket
    }

    /// A new connection (a new routing id: the server sees a new peer that must say hello again).
    func reconnect() throws {
        socket.close()
        socket = try TestClient.connect(context, endpoint)
    }

    func req() -> Int {
        nextReq += 1
        return nextReq
    }

    func send(_ message: Message) throws { try socket.send(Codec.encode(message)) }
    func sendRaw(_ frames: [[UInt8]]) throws { try socket.send(frames) }

    /// The next message within `timeoutMs`, decoded; nil on timeout.
    func receive(timeoutMs: Int) throws -> Message? {
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        var poller = Poller([socket])
        while true {
            let now = SimClock.monotonicNanos()
            guard now < deadline else { return nil }
            let ready = try poller.poll(timeoutMs: Int((deadline - now) / 1_000_000) + 1)
            guard !ready.isEmpty, let frames = try socket.receive(dontWait: true) else { continue }
            return try Codec.decode(frames)
        }
    }

    /// Sends and waits for the reply (skipping replies to other requests), nil on timeout.
    func request(_ message: Message, timeoutMs: Int = 5_000) throws -> Message? {
        try send(message)
        let wanted = TestClient.req(of: message)
        let deadline = SimClock.monotonicNanos() + UInt64(timeoutMs) * 1_000_000
        while SimClock.monotonicNanos() < deadline {
            let left = Int((deadline - SimClock.monotonicNanos()) / 1_000_000)
            guard let reply = try receive(timeoutMs: max(left, 1)) else { return nil }
            if wanted == nil || TestClient.req(of: reply) == wanted || TestClient.req(of: reply) == nil {
                return reply
            }
        }
        return nil
    }

    static func req(of message: Message) -> Int? {
        switch message {
        case .push(let m): return m.req
        case .pushResult(let m): return m.req
        case .pull(let m): return m.req
        case .page(let m): return m.req
        case .control(let m): return m.req
        case .controlAck(let m): return m.req
        case .error(let m): return m.req
        case .hello, .welcome, .notice, .register, .registered, .deviceState, .hint: return nil
        }
    }

    func hello(_ device: String, _ account: String, _ token: String, _ platform: Platform = .android,
               timeoutMs: Int = 5_000) throws -> Message?
    {
        try request(.hello(Hello(device: device, account: account, token: token, platform: platform)),
                    timeoutMs: timeoutMs)
    }

    func push(_ ops: [Op], timeoutMs: Int = 5_000) throws -> Message? {
        try request(.push(Push(req: req(), ops: ops)), timeoutMs: timeoutMs)
    }

    func pull(cursor: Int, limit: Int = 100, account: String? = nil, timeoutMs: Int = 5_000) throws -> Message? {
        try request(.pull(Pull(req: req(), cursor: cursor, limit: limit, account: account)), timeoutMs: timeoutMs)
    }

    func control(_ command: String, _ args: [String: JSONValue] = [:], timeoutMs: Int = 5_000) throws -> ControlAck? {
        guard case .controlAck(let ack)? = try request(.control(Control(req: req(), command: command, args: args)),
                                                       timeoutMs: timeoutMs)
        else { return nil }
        return ack
    }
}

/// A `synclab-server` process on ipc endpoints in a temp folder, with its database, events and log there.
final class ServerProcess {
    let folder: TempFolder
    let context: Context
    let binary: String
    var db: String { folder.file("server.sqlite") }
    var events: String { folder.file("events.jsonl") }
    var log: String { folder.file("server.log") }
    var accounts: String { folder.file("accounts.json") }
    var listen: String { folder.ipc("devices.ipc") }
    var controlEndpoint: String { folder.ipc("control.ipc") }
    private(set) var child: ChildProcess?
    let extraArguments: [String]

    static let accountsJSON = """
        {"accounts": [
            {"id": "acme", "devices": [
                {"id": "pixel", "platform": "android", "token": "t-pixel"},
                {"id": "iphone", "platform": "ios", "token": "t-iphone"}]},
            {"id": "globex", "devices": [{"id": "laptop", "platform": "web", "token": "t-laptop"}]}
        ]}
        """

    init(folder: TempFolder = TempFolder(), extraArguments: [String] = []) throws {
        self.folder = folder
        self.context = try Context()
        self.binary = try Binaries.path("synclab-server")
        self.extraArguments = extraArguments
        try ServerProcess.accountsJSON.write(toFile: folder.file("accounts.json"), atomically: true, encoding: .utf8)
    }

    deinit { child?.killNow() }

    var arguments: [String] {
        ["--db", db, "--listen", listen, "--control", controlEndpoint, "--accounts", accounts, "--events", events]
            + extraArguments
    }

    /// Starts the process; with `waitReady`, returns once it answers `ping`.
    func start(waitReady: Bool = true) throws {
        child = try ChildProcess(binary, arguments, log: log)
        if waitReady { try waitUntilReady() }
    }

    func waitUntilReady(timeout: Double = 20) throws {
        let client = try TestClient(context, endpoint: controlEndpoint)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let ack = try client.control("ping", timeoutMs: 200), ack.ok { return }
            if let status = child?.wait(timeout: 0) {
                throw TestFailure.setup("synclab-server exited \(status): \(serverLog)")
            }
        }
        throw TestFailure.setup("synclab-server did not answer ping within \(timeout)s: \(serverLog)")
    }

    var serverLog: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    func kill9() { child?.killNow() }

    /// SIGTERM; the exit status (nil if it did not exit within `timeout` seconds).
    func terminate(timeout: Double = 10) -> Int32? {
        child?.signal(SIGTERM)
        return child?.wait(timeout: timeout)
    }

    func client() throws -> TestClient { try TestClient(context, endpoint: listen) }
    func controlClient() throws -> TestClient { try TestClient(context, endpoint: controlEndpoint) }

    /// The events written so far, parsed.
    func eventLines() -> [JSONValue] {
        let text = (try? String(contentsOfFile: events, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    func events(ofType type: String) -> [JSONValue] {
        eventLines().filter { $0["type"]?.stringValue == type }
    }
}
