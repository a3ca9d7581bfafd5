import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncProtocol
import Testing

@testable import SyncServer

/// The server's design switches (issue 13): the broken design fails as the seeds say; the default is unchanged.
@Suite("Server design switches")
struct ServerSwitchTests {
    let folder = TempFolder()
    let peer = Peer(routingID: [0, 1, 2, 3])

    func makeStore() throws -> ServerStore {
        let store = try ServerStore(path: folder.file("server.sqlite"), synchronous: .normal)
        try store.load(AccountsFile(accounts: [
            .init(id: "acme", devices: [.init(id: "pixel", platform: .android, token: "t-pixel")]),
        ]))
        return store
    }

    func makeInstance(_ switches: ServerSwitches, faults: ServerFaults = .off) -> ServerInstance {
        var instance = ServerInstance(devices: [DeviceRecord(id: "pixel", account: "acme", platform: .android,
                                                             token: "t-pixel")],
                                      heads: ["acme": 0], faults: faults, seed: 1, switches: switches)
        _ = instance.onDeviceMessage(from: peer, frames: Codec.encode(.hello(Hello(
            device: "pixel", account: "acme", token: "t-pixel", platform: .android))))
        return instance
    }

    func request(_ instance: inout ServerInstance, _ op: Op) throws -> PushRequest {
        let out = instance.onDeviceMessage(from: peer, frames: Codec.encode(.push(Push(req: 5, ops: [op]))))
        guard case .apply(let request)? = out.first else { throw TestFailure("no apply directive in \(out)") }
        return request
    }

    func replies(_ directives: [ServerDirective]) -> [Message] {
        directives.compactMap { if case .reply(_, let message, _) = $0 { return message } else { return nil } }
    }

    func notices(_ directives: [ServerDirective]) -> [Notice] {
        directives.compactMap { if case .notify(let notice) = $0 { return notice } else { return nil } }
    }

    func events(_ directives: [ServerDirective], _ type: String) -> [EventLine] {
        directives.compactMap { if case .log(let event) = $0, event.type == type { return event } else { return nil } }
    }

    let op = Op(key: "pixel-x-1", draft: "d1", action: .create, base: 0, title: "Hello", body: "b")

    @Test("idempotency off: a resend with a known key is applied again; on: it is a duplicate")
    func idempotencyOff() throws {
        let store = try makeStore()
        _ = try store.apply(device: "pixel", account: "acme", ops: [op], idempotency: false)
        let first = try store.apply(device: "pixel", account: "acme", ops: [op.with(key: "fresh")], idempotency: false)
        #expect(first.map(\.reapplied) == [false])
        let again = try store.apply(device: "pixel", account: "acme", ops: [op], idempotency: false)
        #expect(again.map(\.result.outcome) == [.applied])
        #expect(again.map(\.reapplied) == [true])
        var instance = makeInstance(ServerSwitches(idempotency: false))
        let push = try request(&instance, op)
        #expect(events(instance.onApplied(push, outcomes: again), "op.reapplied").count == 1)
        #expect(try store.database.scalarInt("SELECT count(*) FROM changes WHERE op_key = ?", op.key) == 2)
        #expect(try store.database.scalarInt("SELECT count(*) FROM applied_ops") == 2)  // op and "fresh", each once

        let replay = try store.apply(device: "pixel", account: "acme", ops: [op])
        #expect(replay.map(\.result.outcome) == [.duplicate])
        #expect(try store.database.scalarInt("SELECT count(*) FROM changes WHERE op_key = ?", op.key) == 2)
    }

    @Test("the lab's store never marks an op reapplied")
    func idempotencyOn() throws {
        let store = try makeStore()
        let outcomes = try store.apply(device: "pixel", account: "acme", ops: [op]) + store.apply(
            device: "pixel", account: "acme", ops: [op])
        #expect(outcomes.map(\.reapplied) == [false, false])
        #expect(outcomes.map(\.result.outcome) == [.applied, .duplicate])
    }

    @Test("the instance asks the store to skip idempotency only for the accounts the switch names")
    func idempotencyPerAccount() throws {
        var broken = makeInstance(ServerSwitches(idempotency: false, accounts: ["acme"]))
        #expect(try request(&broken, op).idempotency == false)
        var other = makeInstance(ServerSwitches(idempotency: false, accounts: ["globex"]))
        #expect(try request(&other, op).idempotency == true)
        var lab = makeInstance(.correct)
        #expect(try request(&lab, op).idempotency == true)
    }

    @Test("a failed commit applies nothing; the decided outcomes are still handed over")
    func failCommit() throws {
        let store = try makeStore()
        var decided: [AppliedOp] = []
        var early: [AppliedOp] = []
        #expect(throws: ServerError.self) {
            try store.apply(device: "pixel", account: "acme", ops: [op], failCommit: true,
                            beforeCommit: { early = $0 }, decided: { decided = $0 })
        }
        #expect(decided.map(\.result.outcome) == [.applied])
        #expect(early.map(\.result.outcome) == [.applied])
        #expect(try store.database.scalarInt("SELECT count(*) FROM changes") == 0)
        #expect(try store.head(account: "acme") == 0)
    }

    @Test("replyBeforeCommit: the results leave before the commit, and a failed commit has acknowledged a lost op")
    func replyBeforeCommit() throws {
        var broken = makeInstance(ServerSwitches(replyBeforeCommit: true))
        let store = try makeStore()
        let push = try request(&broken, op)
        var decided: [AppliedOp] = []
        var early: [ServerDirective] = []
        #expect(throws: ServerError.self) {
            try store.apply(device: "pixel", account: "acme", ops: push.ops, failCommit: true,
                            beforeCommit: { early = broken.onDecided(push, outcomes: $0) }, decided: { decided = $0 })
        }
        guard case .pushResult(let result)? = replies(early).first else {
            throw TestFailure("no reply before the commit: \(early)")
        }
        #expect(result.results.map(\.outcome) == [.applied])
        let failed = broken.onApplyFailed(push, error: .database("commit failed", busy: false), decided: decided)
        #expect(replies(failed).isEmpty)
        #expect(events(failed, "ack.lost").first?.fields.first { $0.0 == "keys" }?.1 == .array([.string(op.key)]))
        #expect(try store.database.scalarInt("SELECT count(*) FROM changes") == 0)  // acknowledged, not there

        // The lab's design: nothing before the commit; a failed commit is an error the device retries.
        var lab = makeInstance(.correct)
        let labPush = try request(&lab, op)
        #expect(lab.onDecided(labPush, outcomes: decided).isEmpty)
        let labFailed = lab.onApplyFailed(labPush, error: .database("commit failed", busy: false), decided: decided)
        guard case .error(let error)? = replies(labFailed).first else {
            throw TestFailure("the lab's server did not answer a failed commit with an error: \(labFailed)")
        }
        #expect(error.code == .internal)
        #expect(events(labFailed, "ack.lost").isEmpty)
        // And after a commit the reply leaves exactly once, from onApplied.
        #expect(replies(lab.onApplied(labPush, outcomes: decided)).count == 1)
        #expect(replies(broken.onApplied(push, outcomes: decided)).isEmpty)
    }

    @Test("noticeBeforeCommit: the notice leaves before the commit; a failed commit leaves it announcing nothing")
    func noticeBeforeCommit() throws {
        var broken = makeInstance(ServerSwitches(noticeBeforeCommit: true))
        let store = try makeStore()
        let push = try request(&broken, op)
        let decided = try store.apply(device: "pixel", account: "acme", ops: push.ops)
        let early = broken.onDecided(push, outcomes: decided)
        #expect(notices(early).map(\.head) == [1])
        #expect(events(early, "notice.beforeCommit").count == 1)
        #expect(notices(broken.onApplied(push, outcomes: decided)).isEmpty)  // not twice
        let failed = broken.onApplyFailed(push, error: .database("commit failed", busy: false), decided: decided)
        #expect(events(failed, "notice.phantom").count == 1)

        var lab = makeInstance(.correct)
        let labPush = try request(&lab, op)
        #expect(notices(lab.onDecided(labPush, outcomes: decided)).isEmpty)
        #expect(notices(lab.onApplied(labPush, outcomes: decided)).map(\.head) == [1])
    }

    @Test("flags: --idempotency off, --notice-before-commit, --reply-before-commit, --switch-accounts, --fail-commit")
    func flags() throws {
        let spec = ServerConfiguration.command
        let base = ["--db", "x.sqlite", "--listen", "tcp://127.0.0.1:1"]
        let lab = try ServerConfiguration(options: try spec.parse(base))
        #expect(lab.settings.switches == .correct && lab.settings.faults.failCommit == 0)
        let broken = try ServerConfiguration(options: try spec.parse(base + [
            "--idempotency", "off", "--notice-before-commit", "--reply-before-commit", "--switch-accounts", "a,b",
            "--fail-commit", "0.5",
        ]))
        #expect(broken.settings.switches == ServerSwitches(idempotency: false, noticeBeforeCommit: true,
                                                  replyBeforeCommit: true, accounts: ["a", "b"]))
        #expect(broken.settings.faults.failCommit == 0.5)
        #expect(throws: ServerError.self) {
            try ServerConfiguration(options: try spec.parse(base + ["--idempotency", "maybe"]))
        }
    }
}

extension Op {
    /// The same op under another key.
    func with(key: String) -> Op { Op(key: key, draft: draft, action: action, base: base, title: title, body: body) }
}
