import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// Attacks on the server's device socket by clients with no key, an unknown key, a forged key, or another
/// account's valid key. Each asserts the attack fails and changes nothing (docs/SECURITY.md).
@Suite struct ServerAttackTests {
    @Test func legitimateDeviceIsServed() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.helloed("pixel")
            guard case .pushResult(let result)? = try pixel.push([SecureLab.op("pixel-1")]) else {
                Issue.record("no pushResult")
                return
            }
            #expect(result.results.first?.outcome == .applied)
            guard case .page(let page)? = try pixel.pull() else {
                Issue.record("no page")
                return
            }
            #expect(page.changes.count == 1)
        }
    }

    @Test(arguments: ["hello", "push", "pull"])
    func plaintextClientGetsNothing(_ what: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let null = try lab.serverClient()
            try lab.expectUnchanged {
                let reply = try null.attempt(what, opKey: "null-1")
                #expect(reply == nil)
            }
        }
    }

    @Test(arguments: ["hello", "push", "pull"])
    func unknownKeyIsRefused(_ what: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let stranger = try lab.serverClient(pair: try CurveKeyPair.generate())
            try lab.expectUnchanged {
                let reply = try stranger.attempt(what, opKey: "x-1")
                #expect(reply == nil)
            }
            // The server's own decision: the ZAP handler refused the key.
            #expect(lab.eventually { lab.events(lab.serverEvents, type: "request.refused")
                .contains { $0["code"]?.stringValue == "badKey" } })
        }
    }

    /// A client that knows pixel's public key (it is not secret) but not its secret key cannot pose as pixel.
    @Test func forgedKeyWithAnotherDevicesPublicKeyFails() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let other = try CurveKeyPair.generate()
            let socket = try Socket(lab.context, .dealer)
            defer { socket.close() }
            // pixel's public key with a secret key that is not its own: the handshake's proofs do not verify.
            try socket.setCurveClient(serverKey: CurveKeyPair.bytes(z85: lab.keys["server"]!.publicKey)!,
                                      publicKey: CurveKeyPair.bytes(z85: lab.keys["pixel"]!.publicKey)!,
                                      secretKey: CurveKeyPair.bytes(z85: other.secretKey)!)
            try socket.connect(lab.serverListen)
            try lab.expectUnchanged {
                _ = try socket.send(Codec.encode(.hello(Hello(device: "pixel", account: "acme", token: "t-pixel",
                                                              platform: .android))), dontWait: true)
                var poller = Poller([socket])
                #expect(try poller.poll(timeoutMs: silenceMs).isEmpty)
            }
        }
    }

    /// A client that believes in the wrong server key (a man in the middle would present its own) never completes
    /// the handshake: nothing is sent in clear and nothing arrives.
    @Test func wrongServerKeyGetsNothing() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.serverClient(as: "pixel", serverKey: try CurveKeyPair.generate().publicKey)
            try lab.expectUnchanged {
                let reply = try pixel.hello("pixel", "acme", timeoutMs: silenceMs)
                #expect(reply == nil)
            }
        }
    }

    /// laptop (account globex), with its own valid key and even pixel's token, cannot say hello as pixel.
    @Test(arguments: ["pixel", "iphone"])
    func anotherAccountsDeviceCannotHelloAsVictim(_ victim: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let laptop = try lab.serverClient(as: "laptop")
            try lab.expectUnchanged {
                expectError(try laptop.hello(victim, "acme", token: SecureLab.token(victim)), .badToken)
                // Still no session: a pull after the refused hello is refused too.
                expectError(try laptop.pull(), .notAuthenticated)
            }
        }
    }

    @Test func anotherAccountsDeviceCannotPushAfterForgedHello() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let laptop = try lab.serverClient(as: "laptop")
            _ = try laptop.hello("pixel", "acme", token: SecureLab.token("pixel"))
            try lab.expectUnchanged {
                expectError(try laptop.push([SecureLab.op("evil-1")]), .notAuthenticated)
            }
        }
    }

    @Test func anotherAccountsDeviceCannotPullVictimsAccount() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.helloed("pixel")
            _ = try pixel.push([SecureLab.op("pixel-1")])
            let laptop = try lab.helloed("laptop")
            try lab.expectUnchanged {
                expectError(try laptop.pull(account: "acme"), .wrongAccount)
                // Its own pull sees only globex: nothing of acme's.
                guard case .page(let page)? = try laptop.pull() else {
                    Issue.record("no page")
                    return
                }
                #expect(page.changes.isEmpty)
            }
        }
    }

    /// A device of the same account cannot pose as its sibling either: the key, not the hello, names the device.
    @Test func sameAccountDeviceCannotHelloAsSibling() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let iphone = try lab.serverClient(as: "iphone")
            try lab.expectUnchanged {
                expectError(try iphone.hello("pixel", "acme"), .badToken)
            }
        }
    }

    /// While pixel is connected with routing id "pixel", a second connection presenting that id is not given
    /// pixel's pipe (no handover) and gets no session.
    @Test func routingIDOfLiveSessionGainsNothing() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let routing = Array("pixel".utf8)
            let pixel = try lab.helloed("pixel", routingID: routing)
            _ = try pixel.push([SecureLab.op("pixel-1")])
            let laptop = try lab.serverClient(as: "laptop", routingID: routing)
            try lab.expectUnchanged {
                let reply = try laptop.pull(timeoutMs: silenceMs)
                if case .page? = reply { Issue.record("the attacker was served a page") }
                _ = try laptop.push([SecureLab.op("evil-1")], timeoutMs: silenceMs)
            }
            // pixel is still served on its own connection.
            guard case .page(let page)? = try pixel.pull() else {
                Issue.record("pixel lost its session")
                return
            }
            #expect(page.changes.count == 1)
        }
    }

    /// After pixel's connection ends, a connection that presents its routing id inherits no session.
    @Test(arguments: [false, true])
    func routingIDOfEndedSessionGainsNothing(sameKey: Bool) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let routing = Array("pixel-conn".utf8)
            do {
                let pixel = try lab.helloed("pixel", routingID: routing)
                _ = try pixel.push([SecureLab.op("pixel-1")])
            }
            // With pixel's own key too: a new connection must say hello again.
            let attacker = try lab.serverClient(as: sameKey ? "pixel" : "laptop", routingID: routing)
            try lab.expectUnchanged {
                // The old connection may take a moment to close: every try must be refused.
                for _ in 0..<5 {
                    switch try attacker.pull() {
                    case .error(let error)?:
                        #expect(error.code == .notAuthenticated)
                    case nil:
                        // libzmq ignores a connection whose routing id is still in use (no handover): silence is a
                        // refusal too, and the database is unchanged either way.
                        continue
                    case let other?:
                        Issue.record("the attacker was answered \(other)")
                    }
                }
            }
        }
    }

    /// Scanning routing ids finds no session to use: the id of the victim's former connection (read from the
    /// server's log: the best possible guess) and libzmq's automatic ids (0x00 + a counter) around its last four
    /// bytes, tried from another account's valid key once that connection is gone. (A connection's id comes from
    /// the server's ZAP handler, never from the client, so the chosen ids are not even the ones the server sees.)
    @Test func scanningRoutingIDsFindsNothing() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            do {
                let victim = try lab.helloed("pixel")
                _ = try victim.push([SecureLab.op("pixel-1")])
                try Self.makeTheServerLog(victim)
            }
            guard let logged = Self.loggedRoutingID(lab) else {
                Issue.record("no routing id in the log")
                return
            }
            let counter = logged.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            try lab.expectUnchanged {
                var clients: [TestClient] = [try lab.serverClient(as: "laptop", routingID: logged)]
                for guess in (counter &- 16)...(counter &+ 16) {
                    clients.append(try lab.serverClient(as: "laptop", routingID: Self.automaticRoutingID(guess)))
                }
                for client in clients { try client.send(.pull(Pull(req: 1, cursor: 0, limit: 100, account: nil))) }
                for client in clients {
                    if case .page? = try client.receive(timeoutMs: silenceMs) {
                        Issue.record("a guessed id was served")
                    }
                }
            }
            // The victim, connecting again with its key, is served.
            guard case .page? = try lab.helloed("pixel").pull() else {
                Issue.record("the victim is not served")
                return
            }
        }
    }

    /// A refused frame from `client`: the server logs its connection's routing id.
    static func makeTheServerLog(_ client: TestClient) throws {
        try client.sendRaw([Array("SL1 bogus".utf8), Array("{}".utf8)])
        _ = try client.receive(timeoutMs: 5_000)
    }

    /// The routing id (logged in hex) of the first refused connection in the server's log.
    static func loggedRoutingID(_ lab: SecureLab) -> [UInt8]? {
        guard let label = lab.events(lab.serverEvents, type: "request.refused").first?["peer"]?.stringValue,
              label.count >= 2, label.count % 2 == 0
        else { return nil }
        let digits = Array(label)
        let bytes = stride(from: 0, to: digits.count, by: 2).compactMap {
            UInt8(String(digits[$0...$0 + 1]), radix: 16)
        }
        return bytes.count * 2 == digits.count ? bytes : nil
    }

    /// libzmq's automatic routing id for `counter`: 0x00 and the counter's four bytes.
    static func automaticRoutingID(_ counter: UInt32) -> [UInt8] {
        [0, UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
    }

    /// Idempotency keys are scoped by account: laptop reusing a key acme used first gets its own op applied, learns
    /// nothing of acme's, and acme's record is untouched.
    @Test func keyUsedByAnotherAccountIsAnotherOp() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.helloed("pixel")
            guard case .pushResult(let first)? = try pixel.push([SecureLab.op("shared-key", title: "acme's")]) else {
                Issue.record("no pushResult")
                return
            }
            let laptop = try lab.helloed("laptop")
            guard case .pushResult(let second)? = try laptop.push([SecureLab.op("shared-key", title: "globex's")])
            else {
                Issue.record("no pushResult")
                return
            }
            #expect(second.results.first?.outcome == .applied)
            // pixel's resend is still its own duplicate, with its own seq.
            guard case .pushResult(let again)? = try pixel.push([SecureLab.op("shared-key", title: "acme's")]) else {
                Issue.record("no pushResult")
                return
            }
            #expect(again.results.first?.outcome == .duplicate)
            #expect(again.results.first?.seq == first.results.first?.seq)
            guard case .page(let page)? = try pixel.pull() else {
                Issue.record("no page")
                return
            }
            #expect(page.changes.map(\.title) == ["acme's"])
        }
    }

    /// The reverse order: a key globex used first does not make acme's op fail.
    @Test func keyUsedFirstByAnotherAccountDoesNotSpoilOp() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let laptop = try lab.helloed("laptop")
            _ = try laptop.push([SecureLab.op("pixel-000001")])
            let pixel = try lab.helloed("pixel")
            guard case .pushResult(let result)? = try pixel.push([SecureLab.op("pixel-000001")]) else {
                Issue.record("no pushResult")
                return
            }
            #expect(result.results.first?.outcome == .applied)
        }
    }

    /// A connection's session ends when the connection does: the session table shrinks back.
    @Test func sessionsEndWithTheirConnections() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let control = try lab.launcher(lab.serverControl, serverKey: "server")
            do {
                var clients: [TestClient] = []
                for _ in 0..<10 { clients.append(try lab.helloed("pixel")) }
                #expect(try control.ack("stats")?.data?["sessions"]?.intValue == 10)
            }
            #expect(try lab.eventually { try control.ack("stats")?.data?["sessions"]?.intValue == 0 })
        }
    }
}
