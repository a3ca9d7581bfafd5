import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncProtocol
import Testing
import ZeroMQ

@testable import SyncServer

/// End to end: a real `synclab-server` process, real sockets, its real SQLite file.
@Suite("synclab-server process", .serialized)
struct ServerProcessTests {
    func errorCode(_ message: Message?) -> ErrorCode? {
        if case .error(let reply)? = message { return reply.code }
        return nil
    }

    func changeCount(_ server: ServerProcess) throws -> Int {
        let database = try Database(path: server.db)
        return try database.scalarInt("SELECT count(*) FROM changes") ?? -1
    }

    /// How long a test waits for a reply that must come: long, so a loaded machine is slow, not wrong.
    static let patientMs = 30_000

    @Test("authorization: every bad input is answered with its code, writes nothing, and the server keeps serving")
    func authorization() throws {
        // Every request here is answered; a reply that comes after a short wait would be taken for the next
        // request's (an error to a garbage frame has no req), so each wait is long: it ends when the reply comes.
        let server = try ServerProcess.started()
        let device = try server.client()
        let intruder = try server.client()
        let op = Op(key: "k-1", draft: "d1", action: .create, base: 0, title: "T", body: "B")

        // The device's next good request succeeds after each refusal, so one bad client harms no one.
        func goodRequestStillWorks(after refusal: String) throws {
            let reply = try device.pull(cursor: 0, timeoutMs: Self.patientMs)
            guard case .page(let page)? = reply else {
                Issue.record(Comment(rawValue: "the authenticated device's pull failed after the refusal \(refusal): "
                    + "\(String(describing: reply))"))
                return
            }
            #expect(page.head == 0 && page.changes.isEmpty)
        }
        #expect(errorCode(try device.push([op])) == .notAuthenticated)
        #expect(errorCode(try device.pull(cursor: 0)) == .notAuthenticated)
        guard case .welcome(let welcome)? = try device.hello("pixel", "acme", "t-pixel") else {
            Issue.record("good hello refused: \(server.serverLog)")
            return
        }
        #expect(welcome == Welcome(device: "pixel", account: "acme", head: 0))

        /// Raw frames from the device, and the first message that comes back.
        func answer(_ frames: [[UInt8]]) throws -> Message? {
            try device.sendRaw(frames)
            return try device.receive(timeoutMs: Self.patientMs)
        }
        let refusals: [(String, () throws -> Message?, ErrorCode)] = [
            ("push before hello", { try intruder.push([op], timeoutMs: Self.patientMs) }, .notAuthenticated),
            ("wrong token", { try intruder.hello("pixel", "acme", "guess", timeoutMs: Self.patientMs) }, .badToken),
            ("unknown device", { try intruder.hello("toaster", "acme", "t", timeoutMs: Self.patientMs) },
                .unknownDevice),
            ("another account's hello",
                { try intruder.hello("laptop", "acme", "t-laptop", timeoutMs: Self.patientMs) }, .wrongAccount),
            ("pull for another account", { try device.pull(cursor: 0, account: "globex", timeoutMs: Self.patientMs) },
                .wrongAccount),
            ("cursor beyond head", { try device.pull(cursor: 50, timeoutMs: Self.patientMs) }, .cursorAhead),
            ("oversized", {
                let opening = #"{"req":1,"ops":[{"key":"k","draft":"d","action":"create","base":0,"body":""#
                var body = Array(opening.utf8)
                body += [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20) + Array("\"}]}".utf8)
                return try answer([Array("SL1 push".utf8), body])
            }, .tooLarge),
            ("wrong version", { try answer([Array("SL9 push".utf8), Array("{\"req\":1,\"ops\":[]}".utf8)]) },
                .unsupportedVersion),
            ("garbage frame", { try answer([[0xde, 0xad, 0xbe, 0xef]]) }, .badFrame),
            ("garbage body", { try answer([Array("SL1 push".utf8), Array("{not json".utf8)]) }, .malformed),
            ("a message the server does not take",
                { try answer(Codec.encode(.hint(Hint(hint: "h", account: "acme", head: 1)))) }, .unexpected),
        ]
        for (name, send, code) in refusals {
            let reply = try send()
            #expect(errorCode(reply) == code, "\(name): \(String(describing: reply))")
            try goodRequestStillWorks(after: name)
        }
        #expect(try changeCount(server) == 0, "a refusal writes nothing")
        let refused = server.events(ofType: "request.refused").compactMap { $0["code"]?.stringValue }
        #expect(refused.count == refusals.count + 2)
        #expect(Set(refused) == Set(refusals.map(\.2.rawValue)).union(["notAuthenticated"]))

        guard case .pushResult(let result)? = try device.push([op]) else {
            Issue.record("good push failed")
            return
        }
        #expect(result.results == [OpResult(key: "k-1", outcome: .applied, seq: 1, version: 1, conflict: false)])
        guard case .pushResult(let replay)? = try device.push([op]) else {
            Issue.record("replayed push failed")
            return
        }
        #expect(replay.results == [OpResult(key: "k-1", outcome: .duplicate, seq: 1, version: 1, conflict: false)])
        #expect(try changeCount(server) == 1)
        #expect(server.terminate() == 0)
    }

    @Test("a lost notice does not matter: a pull from the cursor returns the change; notices carry references only")
    func lostNoticeRepaired() throws {
        let folder = TempFolder()
        let notify = folder.ipc("notify.ipc")
        let server = try ServerProcess.started(folder: folder,
                                               extraArguments: ["--notify", notify, "--notify-hwm", "1"])
        let pixel = try server.client()
        #expect(try pixel.hello("pixel", "acme", "t-pixel") != nil)
        // No broker is listening: the first notice waits in the queue of one, the next ones are lost.
        for n in 1...3 {
            let reply = try pixel.push([Op(key: "k\(n)", draft: "d", action: .update, base: n - 1, body: "v\(n)")])
            guard case .pushResult(let result)? = reply else {
                Issue.record("push \(n) failed: \(String(describing: reply))")
                return
            }
            #expect(result.results.first?.outcome == .applied)
        }
        #expect(server.events(ofType: "notice.dropped").count >= 1)

        // The iPhone never heard of any of it; its cursor brings everything.
        let iphone = try server.client()
        #expect(try iphone.hello("iphone", "acme", "t-iphone", .ios) != nil)
        guard case .page(let page)? = try iphone.pull(cursor: 0) else {
            Issue.record("pull failed")
            return
        }
        #expect(page.changes.map(\.seq) == [1, 2, 3] && page.head == 3 && page.next == 3)
        #expect(page.changes.last?.body == "v3")

        // A broker comes up: notices arrive (once the PUSH socket has reconnected), each one a reference only.
        let broker = try Socket(server.context, .pull)
        try broker.bind(notify)
        var notices: [[[UInt8]]] = []
        var poller = Poller([broker])
        var pushed = 3
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !notices.contains(where: { (try? Codec.decode($0)).flatMap(Self.head) ?? 0 > 3 }) {
            pushed += 1
            _ = try pixel.push([Op(key: "k\(pushed)", draft: "d", action: .update, base: pushed - 1,
                                   title: "secret title", body: "secret body")])
            while try !poller.poll(timeoutMs: 100).isEmpty, let frames = try broker.receive(dontWait: true) {
                notices.append(frames)
            }
        }
        let last = try #require(notices.last)
        #expect(try Codec.decode(last) == .notice(Notice(account: "acme", head: pushed, origin: "pixel", changes: [
            ChangeRef(seq: pushed, draft: "d", version: pushed),
        ])))
        for frames in notices {
            let body = String(decoding: frames[1], as: UTF8.self)
            #expect(!body.contains("secret") && !body.contains("\"title\"") && !body.contains("\"body\""))
            let keys = try JSONValue.parse(body).objectValue?.map(\.0) ?? []
            #expect(Set(keys) == ["account", "head", "origin", "changes"])
        }
        guard case .page(let rest)? = try iphone.pull(cursor: page.next) else {
            Issue.record("second pull failed")
            return
        }
        #expect(rest.changes.map(\.seq) == Array(4...pushed))
        broker.close()
        #expect(server.terminate() == 0)
    }

    @Test("two pulls of the same page get the same bytes; a change in between gives the new page")
    func samePageSameBytes() throws {
        let folder = TempFolder()
        let server = try ServerProcess.started(folder: folder)
        let pixel = try server.client()
        let iphone = try server.client()
        #expect(try pixel.hello("pixel", "acme", "t-pixel") != nil)
        #expect(try iphone.hello("iphone", "acme", "t-iphone", .ios) != nil)
        for n in 1...2 {
            _ = try pixel.push([Op(key: "k\(n)", draft: "d", action: .update, base: n - 1, body: "v\(n)")])
        }
        // The same pull (same cursor, limit and req) from two devices: the second is served from the page read
        // and encoded for the first, and is the same bytes as that one and as the page encoded afresh.
        func pullFrames(_ client: TestClient, cursor: Int) throws -> [[UInt8]] {
            try client.send(.pull(Pull(req: 41, cursor: cursor, limit: 100)))
            return try #require(try client.receiveFrames(timeoutMs: 5_000))
        }
        let first = try pullFrames(pixel, cursor: 1)
        let second = try pullFrames(iphone, cursor: 1)
        #expect(first == second)
        guard case .page(let page) = try Codec.decode(first) else {
            Issue.record("not a page: \(first)")
            return
        }
        #expect(page.changes.map(\.seq) == [2] && page.head == 2 && page.req == 41)
        #expect(first == Codec.encode(.page(page)))
        // A new change moves the head: the same pull now gets it (a stale page would stop at 2).
        _ = try pixel.push([Op(key: "k3", draft: "d", action: .update, base: 2, body: "v3")])
        guard case .page(let after) = try Codec.decode(try pullFrames(iphone, cursor: 1)) else {
            Issue.record("the pull after a change got no page")
            return
        }
        #expect(after.changes.map(\.seq) == [2, 3] && after.head == 3)
        #expect(server.terminate() == 0)
    }

    static func head(_ message: Message) -> Int? {
        if case .notice(let notice) = message { return notice.head }
        return nil
    }

    @Test("faults at runtime: a dropped reply leaves an unknown outcome that a resend with the same key resolves")
    func dropReplyAtRuntime() throws {
        let server = try ServerProcess.started()
        let control = try server.controlClient()
        let device = try server.client()
        #expect(try device.hello("laptop", "globex", "t-laptop", .web) != nil)
        #expect(try control.ack("faults", ["dropReply": 1])?.ok == true)
        let op = Op(key: "once", draft: "d", action: .create, base: 0, title: "t")
        #expect(try device.push([op], timeoutMs: 500) == nil, "the reply was dropped")
        #expect(try control.ack("faults", ["off": true])?.ok == true)
        guard case .pushResult(let result)? = try device.push([op]) else {
            Issue.record("resend failed")
            return
        }
        #expect(result.results == [OpResult(key: "once", outcome: .duplicate, seq: 1, version: 1, conflict: false)])
        let stats = try #require(try control.ack("stats")?.data)
        #expect(stats["applied"] == .int(1) && stats["duplicates"] == .int(1) && stats["heads"]?["globex"] == .int(1))
        #expect(server.events(ofType: "fault.set").count == 2)
        #expect(server.events(ofType: "fault.injected").first?["kind"] == .string("dropReply"))

        // `stop` acknowledges, then the process exits 0 having written process.stopped.
        #expect(try control.ack("stop")?.ok == true)
        #expect(server.child?.wait(timeout: 10) == 0)
        #expect(server.events(ofType: "process.stopped").count == 1)
    }

    @Test("a delayed reply does not hold up other devices")
    func delayedReplies() throws {
        let server = try ServerProcess.started(extraArguments: ["--reply-delay-ms", "300"])
        let slow = try server.client()
        let fast = try server.client()
        try slow.send(.hello(Hello(device: "pixel", account: "acme", token: "t-pixel", platform: .android)))
        try fast.send(.hello(Hello(device: "laptop", account: "globex", token: "t-laptop", platform: .web)))
        // Both replies arrive: the server queued them instead of sleeping through one.
        #expect(try slow.receive(timeoutMs: 5_000) != nil)
        #expect(try fast.receive(timeoutMs: 5_000) != nil)
        #expect(server.events(ofType: "fault.injected").count == 2)
        #expect(server.terminate() == 0)
    }

    @Test("SIGTERM stops the server cleanly; --help and bad flags answer without starting it")
    func commandLine() throws {
        let server = try ServerProcess.started()
        #expect(server.terminate() == 0)
        let stopped = server.events(ofType: "process.stopped")
        #expect(stopped.count == 1 && stopped.first?["role"] == .string("server"))
        #expect(try Database(path: server.db).integrityCheck() == "ok")

        let folder = TempFolder()
        let binary = try Binaries.path("synclab-server")
        let help = try ChildProcess.run(binary, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--listen ENDPOINT") && help.output.contains("Start one by hand"))

        let unknown = try ChildProcess.run(binary, ["--db", "x", "--listen", "tcp://127.0.0.1:1", "--bogus"])
        #expect(unknown.status == 2)
        #expect(unknown.output.contains("--bogus"))

        try "{\"accounts\": [{\"id\": \"a\"}]}".write(toFile: folder.file("a.json"), atomically: true, encoding: .utf8)
        let badAccounts = try ChildProcess.run(binary,
            ["--db", folder.file("s.sqlite"), "--listen", folder.ipc("s.ipc"),
                                                        "--accounts", folder.file("a.json")])
        #expect(badAccounts.status == 2)
        #expect(badAccounts.output.contains("a.json: accounts[0].devices: is missing"))
    }
}
