import Foundation
import Testing
import ZeroMQ

/// `EdgePoller`: one epoll over the sockets' ZMQ_FDs reports the same sockets `zmq_poll` would, including a message
/// that arrives after the wait began and one that was already queued when the socket was added.
@Suite("EdgePoller")
struct EdgePollerTests {
    @Test("wait returns empty on timeout when nothing arrives")
    func waitTimesOut() throws {
        let context = try Context()
        let pull = try Socket.boundInproc(context, .pull, "edge-quiet")
        let poller = try EdgePoller()
        try poller.add(pull)
        #expect(try poller.wait(timeoutMs: 30) == [])
        #expect(try poller.wait(timeoutMs: 0) == [])
    }

    @Test("a descriptor that signals with no message to read does not end the wait before its time")
    func signalsThatAreNotMessagesDoNotEndTheWait() throws {
        let context = try Context()
        // Small high-water marks: the pipe is full after four messages, and every second one its reader takes sends
        // the writer a command (activate_write), which makes the writer's descriptor signal.
        let pull = try Socket.boundInproc(context, .pull, "edge-spurious") { try $0.setReceiveHighWaterMark(2) }
        let push = try Socket(context, .push)
        defer { push.close() }
        try push.setSendHighWaterMark(2)
        try push.connect(pull.lastEndpoint)
        let poller = try EdgePoller()
        try poller.add(push)
        // A PUSH never has input; its descriptor signals as its peer reads what it sent.
        for n in 0..<8 { _ = try push.send([bytes("m\(n)")], dontWait: true) }
        #expect(try poller.wait(timeoutMs: 0) == [])
        let reader = Thread {
            for _ in 0..<8 {
                usleep(20_000)
                _ = try? pull.receive(dontWait: true)
            }
        }
        reader.start()
        let start = Date()
        #expect(try poller.wait(timeoutMs: 300) == [])
        // Only the timeout ends it (on a loaded machine later, never sooner).
        #expect(Date().timeIntervalSince(start) >= 0.29)
    }

    @Test("wait names exactly the sockets with input, a message queued before the socket was added included")
    func waitNamesReadySockets() throws {
        let context = try Context()
        let (quiet, busy, push) = try quietAndBusyPulls(context, "edge-")
        defer { push.close() }
        let poller = try EdgePoller()
        try poller.add(quiet)
        try poller.add(busy)
        #expect(poller.sockets.count == 2)
        var ready: [Int] = []
        for _ in 0..<100 where ready.isEmpty { ready = try poller.wait(timeoutMs: 100) }
        #expect(ready == [1])
        #expect(try busy.receive(dontWait: true) == [bytes("wake up")])
        poller.touch(1)
        #expect(try poller.wait(timeoutMs: 0) == [])
    }

    @Test("a message that arrives while the wait blocks wakes it, after earlier ones were read to the end")
    func laterMessageWakesTheWait() throws {
        let context = try Context()
        let pull = try Socket.boundInproc(context, .pull, "edge-later")
        let endpoint = pull.lastEndpoint
        let poller = try EdgePoller()
        try poller.add(pull)
        #expect(try poller.wait(timeoutMs: 0) == [])
        let sender = Thread {
            guard let push = try? Socket(context, .push) else { return }
            try? push.connect(endpoint)
            for n in 0..<2 {
                usleep(50_000)
                _ = try? push.send([bytes("late \(n)")])
            }
            usleep(200_000)
            push.close()
        }
        sender.start()
        for n in 0..<2 {
            var ready: [Int] = []
            // Bounded: 100 waits of up to 100 ms each end on the message, or the test fails on `ready`.
            for _ in 0..<100 where ready.isEmpty { ready = try poller.wait(timeoutMs: 100) }
            #expect(ready == [0])
            #expect(try pull.receive(dontWait: true) == [bytes("late \(n)")])
            #expect(try pull.receive(dontWait: true) == nil)
            poller.touch(0)
        }
    }
}
