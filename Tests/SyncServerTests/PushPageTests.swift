import LabKit
import LabTestSupport
import SyncProtocol
import Testing

@testable import SyncServer

/// A push that asks for a page (`Push.cursor`, `limit`): the page is read after the commit and goes with the
/// results in one `pushResult`, so a sending pass needs no pull round trip for its own change (PROTOCOL.md, "A push
/// that pulls"). Never before the commit, never while `slowPullMs` is on.
@Suite("A push that pulls")
struct PushPageTests {
    static let devices = [DeviceRecord(id: "pixel", account: "acme", platform: .android, token: "t-pixel")]
    let peer = Peer(routingID: [4, 2])

    func helloed(_ faults: ServerFaults = .off, switches: ServerSwitches = ServerSwitches()) -> ServerInstance {
        var instance = ServerInstance(devices: Self.devices, heads: ["acme": 3], faults: faults, seed: 1,
                                      switches: switches)
        let hello = Hello(device: "pixel", account: "acme", token: "t-pixel", platform: .android)
        _ = instance.onDeviceMessage(from: peer, frames: Codec.encode(.hello(hello)))
        return instance
    }

    let op = Op(key: "k", draft: "d", action: .create, base: 0, title: "T", body: "B")
    var applied: [AppliedOp] {
        [AppliedOp(result: OpResult(key: "k", outcome: .applied, seq: 4, version: 1, conflict: false),
                   change: Change(seq: 4, draft: "d", action: .create, version: 1, title: "T", body: "B",
                                  origin: "pixel", key: "k", conflict: false))]
    }

    /// The store's request for the push, from the instance.
    func request(_ instance: inout ServerInstance, cursor: Int? = 3) throws -> PushRequest {
        let push = Push(req: 9, ops: [op], cursor: cursor, limit: cursor == nil ? nil : 50)
        let out = instance.onDeviceMessage(from: peer, frames: Codec.encode(.push(push)))
        guard case .apply(let request)? = out.first else { throw TestFailure.setup("no apply: \(out)") }
        return request
    }

    func replies(_ directives: [ServerDirective]) -> [Message] {
        directives.compactMap { if case .reply(_, let message, _) = $0 { message } else { nil } }
    }

    func pulls(_ directives: [ServerDirective]) -> [PullRequest] {
        directives.compactMap { if case .pull(let request) = $0 { request } else { nil } }
    }

    @Test("after the commit the page is read from the push's cursor, then sent with the results in one reply")
    func pageWithResults() throws {
        var instance = helloed()
        let request = try request(&instance)
        #expect(request.page?.cursor == 3 && request.page?.limit == 50)
        let done = instance.onApplied(request, outcomes: applied)
        #expect(replies(done).isEmpty)
        var expected = PullRequest(peer: peer, req: 9, device: "pixel", account: "acme", cursor: 3, limit: 50)
        expected.pushResults = applied.map(\.result)
        #expect(pulls(done) == [expected])
        // The notice leaves first, as without a page.
        let notify = done.firstIndex { if case .notify = $0 { true } else { false } }
        let pull = done.firstIndex { if case .pull = $0 { true } else { false } }
        #expect(notify != nil && pull != nil && notify! < pull!)

        let slice = PageSlice(changes: applied.compactMap(\.change), next: 4, head: 4)
        let served = instance.onPulled(expected, page: slice)
        let page = Page(req: 9, changes: slice.changes, next: 4, head: 4)
        #expect(replies(served) == [.pushResult(PushResult(req: 9, results: applied.map(\.result), page: page))])
        let line = served.compactMap { if case .log(let line) = $0, line.type == "pull.served" { line } else { nil } }
        #expect(line.first?["via"] == .string("push") && line.first?["cursor"] == .int(3))
        #expect(instance.stats.pulls == 1)
    }

    @Test("a push without a cursor is answered at once, as ever")
    func noCursorNoPage() throws {
        var instance = helloed()
        let request = try request(&instance, cursor: nil)
        let done = instance.onApplied(request, outcomes: applied)
        #expect(pulls(done).isEmpty)
        #expect(replies(done) == [.pushResult(PushResult(req: 9, results: applied.map(\.result)))])
    }

    @Test("slowPullMs on: the results go alone and undelayed; the device's own pull meets the slow page")
    func slowPullKeepsItsMeaning() throws {
        var instance = helloed(ServerFaults(slowPullMs: 200))
        let done = instance.onApplied(try request(&instance), outcomes: applied)
        #expect(pulls(done).isEmpty)
        #expect(done.contains(.reply(to: peer, message: .pushResult(PushResult(req: 9, results: applied.map(\.result))),
                                     delayMs: 0)))
    }

    @Test("replyBeforeCommit: the early reply carries no page (nothing is committed to read)")
    func noPageBeforeTheCommit() throws {
        var switches = ServerSwitches()
        switches.replyBeforeCommit = true
        var instance = helloed(switches: switches)
        let request = try request(&instance)
        let early = instance.onDecided(request, outcomes: applied)
        #expect(pulls(early).isEmpty)
        #expect(replies(early) == [.pushResult(PushResult(req: 9, results: applied.map(\.result)))])
    }

    @Test("a page too big to go beside the results is left out, so the reply never passes the body limit")
    func pageThatDoesNotFit() throws {
        var instance = helloed()
        // Results of 500 ops with long keys, and a page that fits alone (under the store's budget) but not with them.
        let results = (0..<500).map {
            OpResult(key: "k-\($0)-" + String(repeating: "x", count: 100), outcome: .applied, seq: $0 + 1, version: 1)
        }
        let body = String(repeating: "b", count: 65_000)
        let changes = (1...15).map {
            Change(seq: $0, draft: "d\($0)", action: .create, version: 1, title: "T", body: body, origin: "pixel",
                   key: "p\($0)", conflict: false)
        }
        let slice = PageSlice(changes: changes, next: 15, head: 15)
        #expect(slice.fits(with: []))
        #expect(!slice.fits(with: results))
        let page = Page(req: 9, changes: changes, next: 15, head: 15)
        // Sent whole, the reply would be refused by the device's decoder (and the resend met the same page again).
        #expect(Codec.body(of: .pushResult(PushResult(req: 9, results: results, page: page))).count
            > Limits.maxBodyBytes)
        var pull = PullRequest(peer: peer, req: 9, device: "pixel", account: "acme", cursor: 0, limit: 200)
        pull.pushResults = results
        let out = instance.onPulled(pull, page: slice)
        guard case .pushResult(let alone)? = replies(out).first, replies(out).count == 1 else {
            Issue.record("not one pushResult")
            return
        }
        #expect(alone.page == nil && alone.results == results)
        #expect(!out.contains { if case .log(let line) = $0 { line.type == "pull.served" } else { false } })
        #expect(instance.stats.pulls == 0)
        // A few results beside the same page fit, and it goes with them.
        pull.pushResults = Array(results.prefix(3))
        guard case .pushResult(let sent)? = replies(instance.onPulled(pull, page: slice)).first else {
            Issue.record("no pushResult")
            return
        }
        #expect(sent.page == page)
        #expect(Codec.body(of: .pushResult(sent)).count <= Limits.maxBodyBytes)
    }

    @Test("a page that cannot be read: the results still go, without it")
    func pageFailure() throws {
        var instance = helloed()
        let done = instance.onApplied(try request(&instance), outcomes: applied)
        let pull = try #require(pulls(done).first)
        let failed = instance.onPullFailed(pull, error: .cursorAhead(account: "acme", cursor: 3, head: 2))
        #expect(replies(failed) == [.pushResult(PushResult(req: 9, results: applied.map(\.result)))])
    }

    @Test("a real server: the page holds the pusher's own change and what others pushed before it")
    func realServer() throws {
        let server = try ServerProcess.started()
        let pixel = try server.client(), iphone = try server.client()
        #expect(try pixel.hello("pixel", "acme", "t-pixel") != nil)
        #expect(try iphone.hello("iphone", "acme", "t-iphone", .ios) != nil)
        let first = Op(key: "p1", draft: "d", action: .create, base: 0, title: "T", body: "one")
        guard case .pushResult(let own)? = try pixel.push([first], pageFrom: 0) else {
            Issue.record("no pushResult: \(server.serverLog)")
            return
        }
        #expect(own.results.map(\.outcome) == [.applied])
        #expect(own.page?.changes.map(\.key) == ["p1"] && own.page?.head == 1 && own.page?.req == own.req)
        _ = try iphone.push([Op(key: "i1", draft: "e", action: .create, base: 0, title: "U", body: "two")])
        let second = Op(key: "p2", draft: "d", action: .update, base: 1, body: "three")
        guard case .pushResult(let next)? = try pixel.push([second], pageFrom: 1, limit: 1) else {
            Issue.record("no second pushResult")
            return
        }
        // From cursor 1, one change a page: the iPhone's change first; the rest is the device's next pull.
        #expect(next.page?.changes.map(\.key) == ["i1"] && next.page?.next == 2 && next.page?.head == 3)
        guard case .page(let rest)? = try pixel.pull(cursor: 2) else {
            Issue.record("pull failed")
            return
        }
        #expect(rest.changes.map(\.key) == ["p2"])
        #expect(server.events(ofType: "pull.served").filter { $0["via"]?.stringValue == "push" }.count == 2)
    }
}
