import CZeroMQ
import Foundation
import LabTestSupport
import Testing
import ZeroMQ

@Suite("Socket")
struct SocketTests {
    /// Binds a ROUTER on the transport and connects a DEALER to the endpoint it really bound.
    private func routerAndDealer(_ context: Context, transport: String, folder: String) throws -> (Socket, Socket) {
        let router = try Socket(context, .router)
        switch transport {
        case "inproc": try router.bind("inproc://round-trip-\(UUID().uuidString)")
        case "ipc": try router.bind("ipc://\(folder)/round-trip.sock")
        default: try router.bind("tcp://127.0.0.1:*")
        }
        let dealer = try Socket(context, .dealer)
        try dealer.connect(router.lastEndpoint)
        return (router, dealer)
    }

    @Test("multipart round trip", arguments: ["inproc", "ipc", "tcp"])
    func multipartRoundTrip(transport: String) throws {
        let folder = TempFolder()
        let context = try Context()
        let (router, dealer) = try routerAndDealer(context, transport: transport, folder: folder.path)
        #expect(router.lastEndpoint.hasPrefix("\(transport)://"))
        if transport == "tcp" {
            // The port libzmq chose for `*`, not the wildcard.
            #expect(!router.lastEndpoint.hasSuffix(":*"))
        }

        let large = Frame((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let message: [Frame] = [bytes("SL1 hint"), [], bytes("{\"é\":\"🌍\"}"), [0, 255, 0], large]
        #expect(try dealer.send(message))

        let received = try #require(try router.receive(within: 5_000))
        // The ROUTER puts the sender's routing id in front of the frames, which arrive whole and in order.
        #expect(received.count == message.count + 1)
        #expect(Array(received.dropFirst()) == message)

        let routingID = received[0]
        #expect(try router.send([routingID] + message.reversed()))
        let reply = try #require(try dealer.receive(within: 5_000))
        #expect(reply == message.reversed())
    }

    @Test("ROUTER replies reach the DEALER whose routing id they name")
    func routerRepliesByRoutingID() throws {
        let context = try Context()
        let router = try Socket(context, .router)
        try router.setRouterMandatory(true)
        try router.bind("tcp://127.0.0.1:*")
        let names = ["pixel", "iphone", "browser"]
        var dealers: [String: Socket] = [:]
        for name in names {
            let dealer = try Socket(context, .dealer)
            try dealer.setRoutingID(bytes(name))
            try dealer.connect(router.lastEndpoint)
            try dealer.send([bytes("hello from \(name)")])
            dealers[name] = dealer
        }

        var seen: [String: String] = [:]
        for _ in names {
            let frames = try #require(try router.receive(within: 5_000))
            #expect(frames.count == 2)
            seen[text(frames[0])] = text(frames[1])
        }
        #expect(seen == Dictionary(uniqueKeysWithValues: names.map { ($0, "hello from \($0)") }))

        // Replies go out in the reverse order of arrival: only the routing id can steer them.
        for name in names.reversed() {
            #expect(try router.send([bytes(name), bytes("for \(name)")]))
        }
        for name in names {
            let dealer = try #require(dealers[name])
            let reply = try #require(try dealer.receive(within: 5_000))
            #expect(reply == [bytes("for \(name)")])
            #expect(try dealer.receive(dontWait: true) == nil, "\(name) got a reply meant for another dealer")
        }
    }

    @Test("a dontWait receive with nothing waiting is nil, not an error")
    func dontWaitReceiveIsNil() throws {
        let context = try Context()
        let pull = try Socket.boundInproc(context, .pull, "nothing")
        #expect(try pull.receive(dontWait: true) == nil)
        #expect(!pull.hasInput)
        // A receive timeout running out is the same "nothing yet".
        #expect(try pull.receive(within: 20) == nil)
    }

    @Test("a dontWait send that would block returns false")
    func dontWaitSendWouldBlock() throws {
        let context = try Context()
        let dealer = try Socket(context, .dealer)
        // Connected to nobody yet, with immediate on: no pipe to queue on, so the send would block.
        try dealer.setImmediate(true)
        try dealer.connect("tcp://127.0.0.1:1")
        #expect(try dealer.send([bytes("anyone?")], dontWait: true) == false)
    }

    @Test("router-mandatory: a send to an unknown peer returns false, to a known one true")
    func routerMandatoryUnknownPeer() throws {
        let context = try Context()
        let router = try Socket.boundInproc(context, .router, "mandatory") { try $0.setRouterMandatory(true) }
        #expect(try router.send([bytes("nobody"), bytes("lost?")]) == false)

        let dealer = try Socket(context, .dealer)
        try dealer.setRoutingID(bytes("somebody"))
        try dealer.connect(router.lastEndpoint)
        try dealer.send([bytes("here")])
        let greeting = try #require(try router.receive(within: 5_000))
        #expect(greeting == [bytes("somebody"), bytes("here")])
        #expect(try router.send([bytes("somebody"), bytes("found")]))
        #expect(try dealer.receive(within: 5_000) == [bytes("found")])
    }

    @Test("PUB with a small send HWM drops for a slow SUB and never blocks")
    func pubDropsWithoutBlocking() throws {
        let context = try Context()
        let pub = try Socket.boundInproc(context, .pub, "pub") { try $0.setSendHighWaterMark(5) }

        // With no subscriber at all, everything is dropped and every send returns.
        for index in 0..<1_000 {
            #expect(try pub.send([bytes("nobody \(index)")], dontWait: true))
        }

        let sub = try Socket(context, .sub)
        try sub.setReceiveHighWaterMark(5)
        try sub.subscribe()
        try sub.connect(pub.lastEndpoint)
        // Wait (bounded) until the subscription has reached the PUB: a probe gets through.
        var joined = false
        for _ in 0..<500 where !joined {
            try pub.send([bytes("probe")], dontWait: true)
            joined = try sub.receive(within: 10) != nil
        }
        #expect(joined)
        while try sub.receive(dontWait: true) != nil {}

        // The SUB reads nothing while 10,000 messages go out: they pile up to the HWMs, the rest are dropped.
        let sent = 10_000
        var accepted = 0
        for index in 0..<sent where try pub.send([bytes("message \(index)")], dontWait: true) {
            accepted += 1
        }
        #expect(accepted == sent, "PUB reports success and drops silently")
        var delivered: [String] = []
        while let frames = try sub.receive(dontWait: true) { delivered.append(text(frames[0])) }
        #expect(!delivered.isEmpty)
        #expect(delivered.count < sent / 10, "\(delivered.count) of \(sent) arrived: nothing was dropped")
        // What did arrive is the oldest, in order: a PUB drops new messages at the HWM.
        #expect(delivered == (0..<delivered.count).map { "message \($0)" })
    }

    @Test("a SUB gets only the prefixes it subscribed to")
    func subscriptionPrefix() throws {
        let context = try Context()
        let pub = try Socket.boundInproc(context, .pub, "prefix")
        let sub = try Socket(context, .sub)
        try sub.subscribe(bytes("acme"))
        try sub.connect(pub.lastEndpoint)
        var got: [Frame]?
        for _ in 0..<500 where got == nil {
            try pub.send([bytes("other"), bytes("not for you")])
            try pub.send([bytes("acme"), bytes("yours")])
            got = try sub.receive(within: 10)
        }
        #expect(got == [bytes("acme"), bytes("yours")])
        while let frames = try sub.receive(dontWait: true) {
            #expect(frames[0] == bytes("acme"))
        }
    }

    @Test("options read back what was set")
    func optionsReadBack() throws {
        let context = try Context()
        let socket = try Socket(context, .dealer, lingerMs: 250)
        try socket.setSendHighWaterMark(17)
        try socket.setReceiveHighWaterMark(19)
        try socket.setReceiveTimeout(ms: 123)
        #expect(try socket.intOption(ZMQ_LINGER) == 250)  // given at creation
        #expect(try socket.intOption(ZMQ_SNDHWM) == 17)
        #expect(try socket.intOption(ZMQ_RCVHWM) == 19)
        #expect(try socket.intOption(ZMQ_RCVTIMEO) == 123)
        #expect(Context.version.major == 4)
        // Every socket gets a linger, 0 by default, so closing one never waits on unsent messages.
        #expect(try Socket(context, .push).intOption(ZMQ_LINGER) == 0)
    }
}
