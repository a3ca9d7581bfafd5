import Foundation
import LabTestSupport
import LabKit
import SyncProtocol
import Testing

@testable import SyncServer

@Suite("ServerInstance")
struct ServerInstanceTests {
    static let devices = [
        DeviceRecord(id: "pixel", account: "acme", platform: .android, token: "t-pixel"),
        DeviceRecord(id: "laptop", account: "globex", platform: .web, token: "t-laptop"),
    ]
    let peer = Peer(routingID: [0, 1, 2, 3])
    let other = Peer(routingID: [9, 9])

    func makeInstance(faults: ServerFaults = .off) -> ServerInstance {
        ServerInstance(devices: Self.devices, heads: ["acme": 3, "globex": 0], faults: faults, seed: 1)
    }

    func frames(_ message: Message) -> [[UInt8]] { Codec.encode(message) }

    func replies(_ directives: [ServerDirective]) -> [Message] {
        directives.compactMap { if case .reply(_, let message, _) = $0 { return message } else { return nil } }
    }

    func events(_ directives: [ServerDirective], _ type: String) -> [EventLine] {
        directives.compactMap { if case .log(let event) = $0, event.type == type { return event } else { return nil } }
    }

    func errorCode(_ directives: [ServerDirective]) -> ErrorCode? {
        guard case .error(let reply)? = replies(directives).first else { return nil }
        return reply.code
    }

    func hello(_ instance: inout ServerInstance, _ peer: Peer, device: String = "pixel", account: String = "acme",
               token: String = "t-pixel", platform: Platform = .android) -> [ServerDirective]
    {
        instance.onDeviceMessage(from: peer, frames: frames(.hello(Hello(device: device, account: account,
                                                                          token: token, platform: platform))))
    }

    /// What the instance does with a push of `ops` from `peer` (helloed or not).
    func push(_ instance: inout ServerInstance, _ ops: [Op], req: Int) -> [ServerDirective] {
        instance.onDeviceMessage(from: peer, frames: frames(.push(Push(req: req, ops: ops))))
    }

    /// A create of draft `draft` under `key`.
    func create(_ key: String, _ draft: String) -> Op { Op(key: key, draft: draft, action: .create, base: 0) }

    @Test("a valid hello opens a session and is welcomed with the account's head")
    func helloAccepted() {
        var instance = makeInstance()
        let out = hello(&instance, peer)
        #expect(replies(out) == [.welcome(Welcome(device: "pixel", account: "acme", head: 3))])
        #expect(events(out, "hello.accepted").count == 1)
        #expect(instance.session(of: peer) == Session(device: "pixel", account: "acme", lastUse: 1))
    }

    @Test("refused hellos: unknown device, bad token, another account; each an error, an event, no session")
    func helloRefused() {
        var instance = makeInstance()
        let cases: [(String, String, String, ErrorCode)] = [
            ("ghost", "acme", "t", .unknownDevice),
            ("pixel", "acme", "wrong", .badToken),
            ("pixel", "globex", "t-pixel", .wrongAccount),
        ]
        for (device, account, token, code) in cases {
            _ = hello(&instance, peer)
            let out = hello(&instance, peer, device: device, account: account, token: token)
            #expect(errorCode(out) == code)
            #expect(events(out, "request.refused").first?["code"] == .string(code.rawValue))
            #expect(events(out, "hello.refused").first?["device"] == .string(device))
            #expect(instance.session(of: peer) == nil, "a failed hello ends the connection's session")
        }
        #expect(instance.stats.refused == 3)
    }

    @Test("push and pull before hello are refused with notAuthenticated and reach no store")
    func beforeHello() {
        var instance = makeInstance()
        let pushed = push(&instance, [create("k", "d")], req: 7)
        let refusal = "push before hello: say hello with the device's token first"
        #expect(replies(pushed) == [.error(ErrorReply(req: 7, code: .notAuthenticated, message: refusal))])
        let pull = instance.onDeviceMessage(from: peer, frames: frames(.pull(Pull(req: 8, cursor: 0, limit: 10))))
        #expect(errorCode(pull) == .notAuthenticated)
        for directive in pushed + pull {
            if case .apply = directive { Issue.record("applied before hello") }
            if case .pull = directive { Issue.record("pulled before hello") }
        }
    }

    @Test("a pull for another account is refused; one for the device's own account goes to the store")
    func pullAccess() {
        var instance = makeInstance()
        _ = hello(&instance, peer)
        let foreign = instance.onDeviceMessage(from: peer, frames: frames(.pull(Pull(req: 1, cursor: 0, limit: 5,
                                                                                    account: "globex"))))
        #expect(errorCode(foreign) == .wrongAccount)
        let own = instance.onDeviceMessage(from: peer, frames: frames(.pull(Pull(req: 2, cursor: 1, limit: 5))))
        #expect(own == [.pull(PullRequest(peer: peer, req: 2, device: "pixel", account: "acme", cursor: 1, limit: 5))])
        // Another connection has no session even while this one has.
        let stranger = instance.onDeviceMessage(from: other, frames: frames(.pull(Pull(req: 3, cursor: 0, limit: 5))))
        #expect(errorCode(stranger) == .notAuthenticated)
    }

    @Test("malformed input is answered with the codec's code and description, echoing req when it can")
    func malformed() {
        var instance = makeInstance()
        let cases: [([[UInt8]], ErrorCode, Int?)] = [
            ([Array("garbage".utf8)], .badFrame, nil),
            ([Array("SL2 push".utf8), Array("{\"req\":4,\"ops\":[]}".utf8)], .unsupportedVersion, 4),
            ([Array("SL1 push".utf8), Array("{\"req\":5,\"ops\":3}".utf8)], .malformed, 5),
            ([Array("SL1 push".utf8), Array("{\"req\":6,\"ops\":[]}".utf8)], .invalid, 6),
            ([Array("SL1 push".utf8), [UInt8](repeating: 0x20, count: Limits.maxBodyBytes + 1)], .tooLarge, nil),
            (Codec.encode(.hint(Hint(hint: "h", account: "acme", head: 1))), .unexpected, nil),
        ]
        for (input, code, req) in cases {
            let out = instance.onDeviceMessage(from: peer, frames: input)
            guard case .error(let reply)? = replies(out).first else {
                Issue.record("no error reply for \(code)")
                continue
            }
            #expect(reply.code == code)
            #expect(reply.req == req)
            #expect(!reply.message.isEmpty)
        }
    }

    @Test("applied ops: events, counters, a notice of references and the reply")
    func applied() throws {
        var instance = makeInstance()
        _ = hello(&instance, peer)
        let ops = [Op(key: "a", draft: "d", action: .create, base: 0, title: "T", body: "B"),
                   Op(key: "b", draft: "d", action: .update, base: 0, body: "C")]
        let out = push(&instance, ops, req: 9)
        let request = PushRequest(peer: peer, req: 9, device: "pixel", account: "acme", ops: ops)
        #expect(out == [.apply(request)])

        let changeA = Change(seq: 4, draft: "d", action: .create, version: 1, title: "T", body: "B", origin: "pixel",
                             key: "a", conflict: false)
        let changeB = Change(seq: 5, draft: "d", action: .update, version: 2, title: "T", body: "C", origin: "pixel",
                             key: "b", conflict: true)
        let outcomes = [
            AppliedOp(result: OpResult(key: "a", outcome: .applied, seq: 4, version: 1, conflict: false),
                      change: changeA),
            AppliedOp(result: OpResult(key: "b", outcome: .applied, seq: 5, version: 2, conflict: true),
                      change: changeB),
        ]
        let done = instance.onApplied(request, outcomes: outcomes)
        #expect(events(done, "op.applied").count == 2)
        #expect(events(done, "op.applied")[1]["conflict"] == .bool(true))
        let notice = Notice(account: "acme", head: 5, origin: "pixel", changes: [
            ChangeRef(seq: 4, draft: "d", version: 1), ChangeRef(seq: 5, draft: "d", version: 2),
        ])
        #expect(done.contains(.notify(notice)))
        #expect(replies(done) == [.pushResult(PushResult(req: 9, results: outcomes.map(\.result)))])
        #expect(instance.stats.applied == 2 && instance.stats.conflicts == 1 && instance.stats.heads["acme"] == 5)
        // The notice is a reference: its encoding carries no title or body.
        let encoded = String(decoding: Codec.encode(.notice(notice))[1], as: UTF8.self)
        #expect(!encoded.contains("\"title\"") && !encoded.contains("\"body\""))

        #expect(events(instance.onNotice(notice, sent: true), "notice.sent").first?["seqs"] == .array([4, 5]))
        #expect(events(instance.onNotice(notice, sent: false), "notice.dropped").count == 1)
        #expect(instance.stats.notices == 1 && instance.stats.noticesDropped == 1)
    }

    @Test("a transient fault answers retryLater for every op and applies nothing")
    func transientFault() {
        var instance = makeInstance(faults: ServerFaults(transient: 1))
        _ = hello(&instance, peer)
        let out = push(&instance, [create("a", "d"), create("b", "e")], req: 1)
        guard case .pushResult(let result)? = replies(out).first else {
            Issue.record("no pushResult")
            return
        }
        #expect(result.results.map(\.outcome) == [.retryLater, .retryLater])
        #expect(events(out, "fault.injected").map { $0["kind"] } == [.string("transient"), .string("transient")])
        #expect(events(out, "op.retryLater").count == 2)
        #expect(!out.contains { if case .apply = $0 { return true } else { return false } })
    }

    @Test("a dropped reply: the commit's events and notice happen, the reply does not")
    func dropReplyFault() {
        var instance = makeInstance(faults: ServerFaults(dropReply: 1))
        _ = hello(&instance, peer)
        let request = PushRequest(peer: peer, req: 1, device: "pixel", account: "acme", ops: [create("a", "d")])
        let change = Change(seq: 4, draft: "d", action: .create, version: 1, title: "", body: "", origin: "pixel",
                            key: "a", conflict: false)
        let out = instance.onApplied(request, outcomes: [
            AppliedOp(result: OpResult(key: "a", outcome: .applied, seq: 4, version: 1, conflict: false),
                      change: change),
        ])
        #expect(replies(out).isEmpty)
        #expect(events(out, "op.applied").count == 1)
        #expect(events(out, "fault.injected").first?["kind"] == .string("dropReply"))
        #expect(out.contains { if case .notify = $0 { return true } else { return false } })
    }

    @Test("injected rejections are drawn per op, passed to the store, and logged only when they happened")
    func rejectFault() {
        var instance = makeInstance(faults: ServerFaults(reject: 1))
        _ = hello(&instance, peer)
        let out = push(&instance, [create("old", "d"), create("new", "e")], req: 2)
        guard case .apply(let request)? = out.first else {
            Issue.record("no apply")
            return
        }
        #expect(request.injectRejections == [0, 1])
        let done = instance.onApplied(request, outcomes: [
            AppliedOp(result: OpResult(key: "old", outcome: .duplicate, seq: 1, version: 1, conflict: false),
                      replay: true),
            AppliedOp(result: OpResult(key: "new", outcome: .rejected, reason: ServerFaults.injectedReason)),
        ])
        #expect(events(done, "fault.injected").map { $0["key"] } == [.string("new")])
        #expect(instance.stats.duplicates == 1 && instance.stats.rejected == 1)
    }

    @Test("a reply delay holds every device reply back and logs it")
    func replyDelay() {
        var instance = makeInstance(faults: ServerFaults(replyDelayMs: 250))
        let out = hello(&instance, peer)
        #expect(out.contains { if case .reply(_, _, 250) = $0 { return true } else { return false } })
        #expect(events(out, "fault.injected").first?["delayMs"] == .int(250))
    }

    @Test("control: ping, stats, faults, addDevice, unknown commands, stop")
    func control() throws {
        var instance = makeInstance()
        func ack(_ directives: [ServerDirective]) -> ControlAck? {
            for directive in directives {
                if case .controlReply(_, .controlAck(let ack)) = directive { return ack }
            }
            return nil
        }
        func send(_ command: String, _ args: [String: JSONValue] = [:]) -> [ServerDirective] {
            instance.onControlMessage(from: peer, frames: frames(.control(Control(req: 1, command: command,
                                                                                  args: args))))
        }
        #expect(ack(send("ping"))?.ok == true)
        let stats = try #require(ack(send("stats"))?.data)
        #expect(stats["heads"]?["acme"] == .int(3) && stats["applied"] == .int(0))

        let set = send("faults", ["dropReply": 0.25, "replyDelayMs": 10])
        #expect(ack(set)?.ok == true)
        #expect(events(set, "fault.set").first?["dropReply"] == .double(0.25))
        #expect(instance.faults == ServerFaults(dropReply: 0.25, replyDelayMs: 10))
        #expect(ack(send("faults", ["dropReply": 7]))?.ok == false)
        #expect(instance.faults.dropReply == 0.25, "a refused change changes nothing")
        #expect(ack(send("faults", ["off": true]))?.ok == true)
        #expect(instance.faults == .off)

        let unknown = try #require(ack(send("dance")))
        #expect(!unknown.ok && unknown.detail.contains("\"dance\""))

        let add = send("addDevice", ["account": "initech", "device": "tab", "platform": "web", "token": "s3cret"])
        let record = DeviceRecord(id: "tab", account: "initech", platform: .web, token: "s3cret")
        guard case .addDevice(let wanted, let ticket)? = add.first else {
            Issue.record("no addDevice directive")
            return
        }
        #expect(wanted == record)
        #expect(ack(instance.onDeviceAdded(record, ticket: ticket))?.ok == true)
        #expect(replies(hello(&instance, other, device: "tab", account: "initech", token: "s3cret",
                                   platform: .web)).first
            == .welcome(Welcome(device: "tab", account: "initech", head: 0)))
        let logged = events(instance.onDeviceAdded(record, ticket: ticket), "control.received").first
        #expect(logged?["args"]?["token"] != .string("s3cret"), "tokens stay out of the event log")
        #expect(ack(send("addDevice", ["device": "x"]))?.ok == false)

        let stop = send("stop")
        #expect(ack(stop)?.ok == true && stop.last == .stop)

        let wrongType = instance.onControlMessage(from: peer, frames: frames(.hello(Hello(
            device: "pixel", account: "acme", token: "t", platform: .ios))))
        guard case .controlReply(_, .error(let error))? = wrongType.last else {
            Issue.record("no error for a hello on the control socket")
            return
        }
        #expect(error.code == .unexpected)
    }

    @Test("by default the session table holds twice the devices the server knows, and at least 4,096")
    func sessionCapacityFollowsTheDevices() {
        let fleet = (0..<2_100).map { DeviceRecord(id: "d\($0)", account: "a\($0 % 7)", platform: .android,
            token: "t\($0)") }
        var instance = ServerInstance(devices: fleet, heads: [:], seed: 1)
        #expect(instance.capacity == 4_200)
        #expect(ServerInstance(devices: Self.devices, heads: [:], seed: 1).capacity == 4_096)
        // 4,200 connections of the fleet's devices each keep their session; the next one evicts the least recent.
        func peer(_ n: Int) -> Peer { Peer(routingID: [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]) }
        for n in 0..<4_200 {
            let device = fleet[n % fleet.count]
            _ = hello(&instance, peer(n), device: device.id, account: device.account, token: device.token)
        }
        #expect(instance.sessions.count == 4_200)
        #expect((0..<4_200).allSatisfy { instance.session(of: peer($0)) != nil })
        _ = hello(&instance, peer(4_200), device: "d0", account: "a0", token: "t0")
        #expect(instance.sessions.count == 4_200)
        #expect(instance.session(of: peer(0)) == nil)
        #expect(instance.session(of: peer(4_200)) != nil)
    }

    @Test("the least recently used session is forgotten past the capacity")
    func sessionCapacity() {
        var instance = ServerInstance(devices: Self.devices, heads: [:], seed: 1, sessionCapacity: 2)
        let peers = (0..<3).map { Peer(routingID: [UInt8($0)]) }
        _ = hello(&instance, peers[0])
        _ = hello(&instance, peers[1])
        _ = instance.onDeviceMessage(from: peers[0], frames: frames(.pull(Pull(req: 1, cursor: 0, limit: 1))))
        _ = hello(&instance, peers[2])
        #expect(instance.session(of: peers[0]) != nil)
        #expect(instance.session(of: peers[1]) == nil)
        #expect(instance.session(of: peers[2]) != nil)
    }
}
