import Foundation
import LabTestSupport
import LabControl
import LabKit
import SQLite
import SyncProtocol
import ZeroMQ

/// A real `synclab-server` and `synclab-broker` running CURVE, as the launcher starts them: a key pair for each
/// process, the launcher and three devices (pixel and iphone of account acme, laptop of globex), the accounts file
/// naming the devices' public keys, every secret key file mode 0600. Attacks are made against it with `TestClient`s
/// from `client(_:pair:serverKey:)`.
final class SecureLab {
    let folder = TempFolder()
    let context: Context
    private(set) var keys: [String: CurveKeyPair] = [:]
    let tcp: Bool
    private(set) var server: ChildProcess?
    private(set) var broker: ChildProcess?
    let serverListen: String
    let serverControl: String
    let brokerListen: String
    let brokerNotices: String
    let brokerControl: String

    static let devices: [(id: String, account: String, platform: Platform)] = [
        ("pixel", "acme", .android), ("iphone", "acme", .ios), ("laptop", "globex", .web),
    ]

    static func token(_ device: String) -> String { "t-\(device)" }

    /// A device pool's key, which the accounts file lets speak for acme's two devices over one broker connection
    /// (docs/PROTOCOL.md, "Pooled links"); laptop (globex) is outside its set.
    static let pool = "pool-acme"
    static let pooled = ["pixel", "iphone"]

    /// `tcp`: the server's device socket listens on 127.0.0.1 (for tests that speak raw TCP to it).
    /// `curve` false: the same lab with NULL on every socket (the control case: what the mechanisms change).
    let curve: Bool

    init(tcp: Bool = false, curve: Bool = true, serverArguments: [String] = []) throws {
        context = try Context()
        self.tcp = tcp
        self.curve = curve
        serverListen = tcp ? "tcp://127.0.0.1:\(freePort())" : folder.ipc("server.ipc")
        serverControl = folder.ipc("server-control.ipc")
        brokerListen = folder.ipc("broker.ipc")
        brokerNotices = folder.ipc("notices.ipc")
        brokerControl = folder.ipc("broker-control.ipc")
        for name in ["server", "broker", "launcher", Self.pool] + Self.devices.map(\.id) {
            let pair = try CurveKeyPair.generate()
            try pair.write(to: folder.file("keys"), name: name)
            keys[name] = pair
        }
        let devices = { (account: String) in
            Self.devices.filter { $0.account == account }.map { d in
                "{\"id\":\"\(d.id)\",\"platform\":\"\(d.platform.rawValue)\",\"token\":\"\(Self.token(d.id))\","
                    + "\"publicKey\":\"\(self.keys[d.id]!.publicKey)\"}"
            }.joined(separator: ",")
        }
        let accounts = "{\"accounts\":[{\"id\":\"acme\",\"devices\":[\(devices("acme"))]},"
            + "{\"id\":\"globex\",\"devices\":[\(devices("globex"))]}],"
            + "\"pools\":[{\"id\":\"\(Self.pool)\",\"publicKey\":\"\(keys[Self.pool]!.publicKey)\","
            + "\"devices\":[\(Self.pooled.map { "\"\($0)\"" }.joined(separator: ","))]}]}"
        try accounts.write(toFile: accountsPath, atomically: true, encoding: .utf8)
        try start(serverArguments: serverArguments)
    }

    var accountsPath: String { folder.file("accounts.json") }
    var dbPath: String { folder.file("server.sqlite") }
    var serverEvents: String { folder.file("server.jsonl") }
    var brokerEvents: String { folder.file("broker.jsonl") }
    func secretFile(_ name: String) -> String { folder.file("keys/\(name).secret") }
    func publicFile(_ name: String) -> String { folder.file("keys/\(name).public") }

    private func start(serverArguments: [String]) throws {
        broker = try ChildProcess(try Binaries.path("synclab-broker"), [
            "--listen", brokerListen, "--notices", brokerNotices, "--control", brokerControl,
            "--accounts", accountsPath, "--events", brokerEvents,
        ] + (curve ? ["--key-file", secretFile("broker"), "--launcher-key-file", publicFile("launcher"),
                      "--server-key-file", publicFile("server")] : []), log: folder.file("broker.log"))
        server = try ChildProcess(try Binaries.path("synclab-server"), [
            "--db", dbPath, "--listen", serverListen, "--control", serverControl, "--accounts", accountsPath,
            "--notify", brokerNotices, "--events", serverEvents,
        ] + (curve ? ["--key-file", secretFile("server"), "--launcher-key-file", publicFile("launcher"),
                      "--broker-key-file", publicFile("broker")] : []) + serverArguments,
            log: folder.file("server.log"))
        try waitReady(serverControl, serverKey: "server", process: server!)
        try waitReady(brokerControl, serverKey: "broker", process: broker!)
    }

    private func waitReady(_ endpoint: String, serverKey: String, process: ChildProcess) throws {
        let client = try launcher(endpoint, serverKey: serverKey)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let ack = try client.ack("ping", timeoutMs: 200), ack.ok { return }
            if let status = process.wait(timeout: 0) {
                throw TestFailure.setup("a lab process exited \(status): \(log("server"))\(log("broker"))")
            }
        }
        throw TestFailure.setup("a lab process did not answer ping: \(log("server"))\(log("broker"))")
    }

    func log(_ name: String) -> String {
        (try? String(contentsOfFile: folder.file("\(name).log"), encoding: .utf8)) ?? ""
    }

    deinit {
        server?.killNow()
        broker?.killNow()
    }

    // MARK: - Clients

    /// A client as the Security tests' peers are: reconnects after 20 ms, never blocks on a send (a CURVE server
    /// that never admitted it would hold it forever) and takes the first message as the reply to every request, so
    /// a test sees every reply. `pair` and `serverKey` give it CURVE; `receiveHWM` also shrinks its kernel receive
    /// buffer, so a client that does not read stops the server's sends sooner.
    func client(_ endpoint: String, pair: CurveKeyPair?, serverKey: String?, routingID: [UInt8]? = nil,
                receiveHWM: Int32? = nil) throws -> TestClient {
        let curve = pair.flatMap { pair in serverKey.map { (pair: pair, serverKey: $0) } }
        return try TestClient(context, endpoint: endpoint, options: .init(
            reconnectMs: 20, sendMode: .dontWait, replyMatching: .none, curve: curve, routingID: routingID,
            receiveHWM: receiveHWM, receiveBufferBytes: receiveHWM == nil ? nil : 4096))
    }

    /// A DEALER to the server as `device` (its own key pair), or with `pair` (any key), or NULL (`pair` nil and
    /// `device` nil).
    func serverClient(as device: String? = nil, pair: CurveKeyPair? = nil, serverKey: String? = nil,
                      routingID: [UInt8]? = nil, receiveHWM: Int32? = nil) throws -> TestClient {
        let key = pair ?? (curve ? device.flatMap { keys[$0] } : nil)
        return try client(serverListen, pair: key, serverKey: key == nil ? nil : serverKey ?? keys["server"]!.publicKey,
                          routingID: routingID, receiveHWM: receiveHWM)
    }

    func brokerClient(as device: String? = nil, pair: CurveKeyPair? = nil, routingID: [UInt8]? = nil) throws
        -> TestClient
    {
        let key = pair ?? (curve ? device.flatMap { keys[$0] } : nil)
        return try client(brokerListen, pair: key, serverKey: key == nil ? nil : keys["broker"]!.publicKey,
                          routingID: routingID)
    }

    /// The lab's control client with the launcher's key (the only one admitted), or with `pair`, or NULL (`null`).
    func launcher(_ endpoint: String, serverKey: String, pair: CurveKeyPair? = nil, null: Bool = false) throws
        -> ControlClient
    {
        let key = null || !curve ? nil : pair ?? keys["launcher"]!
        return try ControlClient(context: context, endpoint: endpoint,
            curve: key.map { ($0, keys[serverKey]!.publicKey) },
                                 liveOnly: false)
    }

    /// A PUSH to the broker's notices socket, with `pair` (or NULL) and the broker key it believes in.
    func noticeSender(pair: CurveKeyPair?) throws -> Socket {
        let socket = try Socket(context, .push)
        if let pair { try socket.setCurveClient(pair, serverKey: keys["broker"]!.publicKey) }
        try socket.connect(brokerNotices)
        return socket
    }

    // MARK: - What changed

    /// Every row of the server's tables, as text: an attack that "changes nothing" leaves it equal.
    func databaseSnapshot() throws -> [String] {
        let database = try Database(path: dbPath, synchronous: .normal)
        var rows: [String] = []
        for table in ["accounts", "devices", "drafts", "changes", "applied_ops"] {
            try database.forEach("SELECT * FROM \(table) ORDER BY 1, 2") { row in
                rows.append(table + ":" + (0..<row.columnCount).map { "\(row.value($0))" }.joined(separator: "|"))
            }
        }
        return rows
    }

    func events(_ path: String, type: String) -> [JSONValue] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            .filter { $0["type"]?.stringValue == type }
    }

    /// Hints the broker accepted so far (from its own decisions).
    var hintsAccepted: Int { events(brokerEvents, type: "hint.accepted").count }

    func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Resident memory of the server process, in KiB, from /proc/PID/status.
    var serverRSSKiB: Int { server.map { Self.rssKiB($0.pid) } ?? 0 }

    /// Resident memory of process `pid`, in KiB, from /proc/PID/status (0 when it is gone).
    static func rssKiB(_ pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    var serverAlive: Bool { server?.wait(timeout: 0) == nil }
    var brokerAlive: Bool { broker?.wait(timeout: 0) == nil }

    // MARK: - A legitimate device

    /// `device` says hello with its own key and token; the welcome (fails the setup otherwise).
    func helloed(_ device: String, routingID: [UInt8]? = nil) throws -> TestClient {
        let client = try serverClient(as: device, routingID: routingID)
        let spec = Self.devices.first { $0.id == device }!
        guard case .welcome? = try client.request(.hello(Hello(device: device, account: spec.account,
                                                               token: Self.token(device), platform: spec.platform)))
        else { throw TestFailure.setup("\(device) could not say hello: \(log("server"))") }
        return client
    }

    /// `device` registers with the broker with its own key.
    func registered(_ device: String, routingID: [UInt8]? = nil) throws -> TestClient {
        let client = try brokerClient(as: device, routingID: routingID)
        let spec = Self.devices.first { $0.id == device }!
        guard case .registered? = try client.request(.register(Register(device: device, account: spec.account,
                                                                        platform: spec.platform,
                                                                        token: Self.token(device))))
        else { throw TestFailure.setup("\(device) could not register: \(log("broker"))") }
        return client
    }

    /// A create op.
    static func op(_ key: String, draft: String = "d1", title: String = "t") -> Op {
        Op(key: key, draft: draft, action: .create, base: 0, title: title, body: "b")
    }
}
