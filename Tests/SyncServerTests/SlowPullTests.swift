import LabKit
import SyncProtocol
import Testing

@testable import SyncServer

/// `slowPullMs` (a runtime fault added through the settings table only): every page of a pull waits, nothing else.
struct SlowPullTests {
    static let peer = Peer(routingID: [7, 7])

    static func delays(_ directives: [ServerDirective]) -> [Int] {
        directives.compactMap { if case .reply(_, _, let delayMs) = $0 { return delayMs } else { return nil } }
    }

    static func injected(_ directives: [ServerDirective]) -> [String] {
        directives.compactMap {
            if case .log(let line) = $0, line.type == "fault.injected" { return line["kind"]?.stringValue } else {
                return nil
            }
        }
    }

    static func served(_ faults: ServerFaults) -> [ServerDirective] {
        var instance = ServerInstance(devices: [], heads: ["acme": 0], faults: faults, seed: 1)
        let request = PullRequest(peer: peer, req: 1, device: "pixel", account: "acme", cursor: 0, limit: 10)
        return instance.onPulled(request, page: PageSlice(changes: [], next: 0, head: 0))
    }

    @Test func aPullsPageWaitsAndSaysSo() {
        let out = Self.served(ServerFaults(slowPullMs: 250))
        #expect(Self.delays(out) == [250])
        #expect(Self.injected(out) == ["slowPull"])
        #expect(Self.delays(Self.served(.off)) == [0] && Self.injected(Self.served(.off)).isEmpty)
    }

    @Test func itAddsToTheReplyDelay() {
        let out = Self.served(ServerFaults(replyDelayMs: 100, slowPullMs: 250))
        #expect(Self.delays(out) == [350])
        #expect(Self.injected(out) == ["replyDelay", "slowPull"])
    }

    @Test func otherRepliesDoNotWait() {
        var instance = ServerInstance(devices: [], heads: [:], faults: ServerFaults(slowPullMs: 250), seed: 1)
        let frames = Codec.encode(.control(Control(req: 1, command: "ping", args: [:])))
        let out = instance.onControlMessage(from: Self.peer, frames: frames)
        #expect(Self.injected(out).isEmpty)
        // A push that is refused (no hello) is answered at once.
        let push = instance.onDeviceMessage(from: Self.peer, frames: Codec.encode(.push(Push(req: 2, ops: []))))
        #expect(Self.delays(push) == [0])
    }
}
