import Foundation
import LabControl
import LabTestSupport
import SyncProtocol
import ZeroMQ

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

    /// A server process started on `folder` and answering `ping`.
    static func started(folder: TempFolder = TempFolder(), extraArguments: [String] = []) throws -> ServerProcess {
        let server = try ServerProcess(folder: folder, extraArguments: extraArguments)
        try server.start()
        return server
    }

    func waitUntilReady(timeout: Double = 20) throws {
        let client = try controlClient()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let ack = try client.ack("ping", timeoutMs: 200), ack.ok { return }
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
    func controlClient() throws -> ControlClient {
        try ControlClient(context: context, name: "synclab-server", endpoint: controlEndpoint, liveOnly: false)
    }

    /// The events written so far, parsed.
    func eventLines() -> [JSONValue] {
        let text = (try? String(contentsOfFile: events, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    func events(ofType type: String) -> [JSONValue] {
        eventLines().filter { $0["type"]?.stringValue == type }
    }
}
