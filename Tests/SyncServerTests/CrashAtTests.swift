import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncProtocol
import Testing
import ZeroMQ

@testable import SyncServer

/// Crash points in a real `synclab-server`: `--crash-at` and the control command `crashAt` make it SIGKILL itself at
/// the named moment, and what was committed before that moment survives.
@Suite("synclab-server crash points", .serialized)
struct CrashAtTests {
    @Test("--crash-at after-commit-before-reply: the push is committed, never answered; the resend is a duplicate")
    func afterCommitBeforeReply() throws {
        let server = try ServerProcess.started(extraArguments: ["--crash-at", "server.after-commit-before-reply"])
        let device = try server.client()
        #expect(try device.hello("laptop", "globex", "t-laptop", .web) != nil)
        let op = Op(key: "k1", draft: "d", action: .create, base: 0, title: "t")
        #expect(try device.push([op], timeoutMs: 1_000) == nil, "answered although it died before its reply")
        #expect(server.child?.wait(timeout: 10) == 128 + SIGKILL)
        let crashing = server.events(ofType: "process.crashing")
        #expect(crashing.map { $0["point"] } == [.string("server.after-commit-before-reply")])
        #expect(crashing.first?["nth"] == .int(1))
        #expect(try Database(path: server.db).scalarInt("SELECT count(*) FROM changes") == 1, "the commit was lost")

        // Restarted without the flag: the same key is a duplicate of the committed op, not a second change.
        let again = try ServerProcess.started(folder: server.folder)
        let resend = try again.client()
        #expect(try resend.hello("laptop", "globex", "t-laptop", .web) != nil)
        guard case .pushResult(let result)? = try resend.push([op]) else {
            Issue.record("no answer to the resend")
            return
        }
        #expect(result.results.map(\.outcome) == [.duplicate])
        #expect(try Database(path: again.db).scalarInt("SELECT count(*) FROM changes") == 1)
    }

    @Test("control crashAt {point, nth}: dies on the nth occurrence after arming; a bad point is refused")
    func armedOverControl() throws {
        let server = try ServerProcess.started()
        let control = try server.controlClient()
        let refused = try #require(try control.ack("crashAt", ["point": "broker.after-deliver"]))
        #expect(!refused.ok && refused.detail.contains("server.after-commit-before-reply"), "\(refused.detail)")
        #expect(try control.ack("crashAt", ["point": "server.after-reply", "nth": 2])?.ok == true)
        let device = try server.client()
        #expect(try device.hello("laptop", "globex", "t-laptop", .web) != nil)
        let first = Op(key: "a", draft: "d", action: .create, base: 0, title: "t")
        #expect(try device.push([first]) != nil, "the first occurrence must not fire")
        #expect(server.child?.wait(timeout: 0) == nil)
        let second = Op(key: "b", draft: "e", action: .create, base: 0, title: "t")
        _ = try device.push([second], timeoutMs: 1_000)
        #expect(server.child?.wait(timeout: 10) == 128 + SIGKILL)
        #expect(server.events(ofType: "process.crashing").first?["nth"] == .int(2))
        #expect(try Database(path: server.db).scalarInt("SELECT count(*) FROM changes") == 2)
    }

    @Test("a bad --crash-at is a usage error naming the server's points")
    func badFlag() throws {
        let folder = TempFolder()
        let binary = try Binaries.path("synclab-server")
        let bad = try ChildProcess.run(binary, ["--db", folder.file("s.sqlite"), "--listen", folder.ipc("s.ipc"),
                                                "--crash-at", "device.after-claim"])
        #expect(bad.status == 2)
        #expect(bad.output.contains("server.after-commit-before-reply, server.after-notice, server.after-reply"),
                "\(bad.output)")
        let help = try ChildProcess.run(binary, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("server.after-notice"))
    }
}
