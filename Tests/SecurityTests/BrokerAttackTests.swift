import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// Attacks on the broker: its device socket (register, deviceState, routing-id takeover) and its notices socket
/// (forged notices). Each asserts the attack fails, no hint is accepted or delivered, and nothing changes.
@Suite struct BrokerAttackTests {
    static let notice = Notice(account: "acme", head: 1, origin: "iphone", changes: [ChangeRef(seq: 1, draft: "d1",
                                                                                             version: 1)])

    /// The positive control: a notice from the server's own key becomes a hint at pixel.
    @Test func serverNoticeBecomesHint() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.registered("pixel")
            let server = try lab.noticeSender(pair: lab.keys["server"]!)
            _ = try server.send(Codec.encode(.notice(Self.notice)))
            guard case .hint(let hint)? = try pixel.receive(timeoutMs: 5_000) else {
                Issue.record("no hint")
                return
            }
            #expect(hint.account == "acme")
        }
    }

    /// Notices from anyone but the server's key: plaintext, an unknown key, a device's key, a key pair that claims
    /// the server's public key without its secret.
    @Test(arguments: ["null", "unknown", "device", "forged"])
    func forgedNoticesMakeNoHint(_ who: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.registered("pixel")
            let sender: Socket
            switch who {
            case "null": sender = try lab.noticeSender(pair: nil)
            case "unknown": sender = try lab.noticeSender(pair: try CurveKeyPair.generate())
            case "device": sender = try lab.noticeSender(pair: lab.keys["laptop"]!)
            default:
                sender = try Socket(lab.context, .push)
                try sender.setCurveClient(serverKey: CurveKeyPair.bytes(z85: lab.keys["broker"]!.publicKey)!,
                                          publicKey: CurveKeyPair.bytes(z85: lab.keys["server"]!.publicKey)!,
                                          secretKey: CurveKeyPair.bytes(z85: try CurveKeyPair.generate().secretKey)!)
                try sender.connect(lab.brokerNotices)
            }
            defer { sender.close() }
            try lab.expectUnchanged {
                for _ in 0..<100 { _ = try sender.send(Codec.encode(.notice(Self.notice)), dontWait: true) }
                let hint = try pixel.receive(timeoutMs: silenceMs)
                #expect(hint == nil)
            }
            #expect(lab.events(lab.brokerEvents, type: "notice.received").isEmpty)
        }
    }

    @Test(arguments: ["null", "unknown"])
    func registerWithoutAdmittedKeyGetsNothing(_ who: String) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let client = who == "null"
                ? try lab.brokerClient() : try lab.brokerClient(pair: try CurveKeyPair.generate())
            try lab.expectUnchanged {
                let reply = try client.request(.register(Register(device: "pixel", account: "acme", platform: .android,
                                                                  token: "t-pixel")), timeoutMs: silenceMs)
                #expect(reply == nil)
            }
            #expect(lab.events(lab.brokerEvents, type: "device.registered").isEmpty)
        }
    }

    /// laptop's valid key, with pixel's token, cannot register as pixel, and gets none of pixel's hints.
    @Test func anotherAccountsDeviceCannotRegisterAsVictim() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let laptop = try lab.brokerClient(as: "laptop")
            expectError(try laptop.request(.register(Register(
                device: "pixel", account: "acme", platform: .android, token: "t-pixel"))), .badToken)
            #expect(lab.events(lab.brokerEvents, type: "device.registered").isEmpty)
            let server = try lab.noticeSender(pair: lab.keys["server"]!)
            _ = try server.send(Codec.encode(.notice(Self.notice)))
            #expect(try laptop.receive(timeoutMs: silenceMs) == nil)
        }
    }

    /// While pixel is registered under routing id "pixel", a connection copying that id does not take over its
    /// pipe: pixel keeps receiving its hints and the copier gets none.
    @Test func routingIDCopyDoesNotTakeOverPipe() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let routing = Array("pixel".utf8)
            let pixel = try lab.registered("pixel", routingID: routing)
            let copier = try lab.brokerClient(as: "laptop", routingID: routing)
            // The copier talks (so its connection is up) before the notice.
            try copier.send(.deviceState(DeviceState(device: "pixel", online: true, app: .foreground)))
            usleep(100_000)
            let server = try lab.noticeSender(pair: lab.keys["server"]!)
            _ = try server.send(Codec.encode(.notice(Self.notice)))
            guard case .hint? = try pixel.receive(timeoutMs: 5_000) else {
                Issue.record("pixel lost its hint")
                return
            }
            let stolen = try copier.receive(timeoutMs: silenceMs)
            if case .hint? = stolen { Issue.record("the copier received pixel's hint") }
        }
    }

    /// After pixel's connection ends, a connection presenting its routing id receives none of its hints.
    @Test func routingIDOfEndedRegistrationGetsNoHint() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let routing = Array("pixel-conn".utf8)
            do { _ = try lab.registered("pixel", routingID: routing) }
            usleep(200_000)  // the old connection closes; the broker's monitor ends its binding
            let copier = try lab.brokerClient(as: "laptop", routingID: routing)
            try copier.send(.deviceState(DeviceState(device: "laptop", online: true, app: .foreground)))
            _ = try copier.receive(timeoutMs: silenceMs)  // its own refusal (laptop never registered)
            let server = try lab.noticeSender(pair: lab.keys["server"]!)
            _ = try server.send(Codec.encode(.notice(Self.notice)))
            let stolen = try copier.receive(timeoutMs: silenceMs)
            if case .hint? = stolen { Issue.record("the copier received pixel's hint") }
            #expect(lab.events(lab.brokerEvents, type: "hint.delivered").isEmpty)
        }
    }

    /// A deviceState for pixel from laptop's connection is refused and does not change pixel's state.
    @Test func deviceStateForAnotherDeviceIsRefused() async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            _ = try lab.registered("pixel")
            let laptop = try lab.brokerClient(as: "laptop")
            expectError(try laptop.request(.deviceState(DeviceState(
                device: "pixel", online: false, app: .forceQuit))), .notAuthenticated)
            #expect(lab.events(lab.brokerEvents, type: "device.state").isEmpty)
        }
    }

    /// An `error` sent to the broker is not answered (no error loops).
    @Test(arguments: [false, true])
    func errorIsNotAnswered(decodable: Bool) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let pixel = try lab.registered("pixel")
            try pixel.sendRaw(SecureLab.errorFrames(decodable: decodable))
            #expect(try pixel.receive(timeoutMs: silenceMs) == nil)
            #expect(lab.eventually { !lab.events(lab.brokerEvents, type: "request.refused").isEmpty })
        }
    }
}
