import Foundation
import Testing
import ZeroMQ

@Suite("Poller")
struct PollerTests {
    @Test("poll returns empty on timeout when nothing arrives")
    func pollTimesOut() throws {
        let context = try Context()
        let router = try Socket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        let pull = try Socket.boundInproc(context, .pull, "quiet")
        var poller = Poller([router, pull])
        #expect(try poller.poll(timeoutMs: 30) == [])
        #expect(try poller.poll(timeoutMs: 0) == [])
    }

    @Test("poll names exactly the sockets with input")
    func pollNamesReadySockets() throws {
        let context = try Context()
        let (quiet, busy, push) = try quietAndBusyPulls(context, "")
        defer { push.close() }

        var poller = Poller()
        poller.add(quiet)
        poller.add(busy)
        #expect(poller.sockets.count == 2)
        #expect(try poller.poll(timeoutMs: 5_000) == [1])
        #expect(try busy.receive(dontWait: true) == [bytes("wake up")])
        // Read: nothing left to report.
        #expect(try poller.poll(timeoutMs: 0) == [])
    }

    @Test("a pipe polls beside the sockets, after them, and its closed end reads as ready")
    func pollWatchesAPipe() throws {
        let context = try Context()
        let quiet = try Socket.boundInproc(context, .pull, "quiet")
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var poller = Poller([quiet])
        poller.add(fd: ends[0])
        #expect(try poller.poll(timeoutMs: 20) == [])
        #expect(write(ends[1], "x", 1) == 1)
        #expect(try poller.poll(timeoutMs: 1_000) == [1])
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 1)
        #expect(try poller.poll(timeoutMs: 20) == [])
        // The writer gone (a child that exited): the reader is told, so it can reap the child.
        close(ends[1])
        #expect(try poller.poll(timeoutMs: 1_000) == [1])
        // The sockets' own polling is unchanged by a pipe that came and went.
        #expect(poller.sockets.count == 1)
    }

    @Test("receive(timeoutMs:) returns the next message, and nil once the wait is over with nothing sent")
    func receiveWithinATimeout() throws {
        let context = try Context()
        let pull = try Socket.boundInproc(context, .pull, "within")
        #expect(try pull.receive(timeoutMs: 20) == nil)
        let push = try Socket(context, .push)
        try push.connect(pull.lastEndpoint)
        try push.send([bytes("a"), bytes("b")])
        #expect(try pull.receive(timeoutMs: 5_000) == [bytes("a"), bytes("b")])
        #expect(try pull.receive(timeoutMs: 0) == nil)
    }
}
