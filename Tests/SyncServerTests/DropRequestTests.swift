import LabTestSupport
import LabKit
import SyncProtocol
import Testing

@testable import SyncServer

/// The `dropRequest` fault: a push lost before its commit, so the device is left with an unknown outcome the server
/// did NOT apply (unlike `dropReply`, whose ops are committed).
@Suite("ServerFaults.dropRequest")
struct DropRequestTests {
    let peer = Peer(routingID: [0, 1, 2, 3])

    func makeInstance(faults: ServerFaults) -> ServerInstance {
        ServerInstance(devices: [DeviceRecord(id: "pixel", account: "acme", platform: .android, token: "t1")],
                       heads: ["acme": 0], faults: faults, seed: 11)
    }

    func frames(_ message: Message) -> [[UInt8]] { Codec.encode(message) }

    var hello: [[UInt8]] { frames(.hello(Hello(device: "pixel", account: "acme", token: "t1", platform: .android))) }

    @Test("a dropped request reaches no store, gets no reply, and logs one fault per op")
    func droppedBeforeTheCommit() {
        var instance = makeInstance(faults: ServerFaults(dropRequest: 1))
        _ = instance.onDeviceMessage(from: peer, frames: hello)
        let ops = [Op(key: "a", draft: "d", action: .create, base: 0),
                   Op(key: "b", draft: "e", action: .create, base: 0)]
        let out = instance.onDeviceMessage(from: peer, frames: frames(.push(Push(req: 2, ops: ops))))
        #expect(!out.contains { if case .apply = $0 { return true } else { return false } })
        #expect(!out.contains { if case .reply = $0 { return true } else { return false } })
        let kinds = out.compactMap { directive -> String? in
            guard case .log(let event) = directive, event.type == "fault.injected" else { return nil }
            return JSONValue.object(event.fields)["kind"]?.stringValue
        }
        #expect(kinds == ["dropRequest", "dropRequest"])
        #expect(instance.stats.faultsInjected == 2 && instance.stats.applied == 0)
    }

    @Test("off, a push goes to the store as before")
    func offAppliesAsBefore() {
        var instance = makeInstance(faults: .off)
        _ = instance.onDeviceMessage(from: peer, frames: hello)
        let out = instance.onDeviceMessage(from: peer, frames: frames(.push(Push(req: 2, ops: [
            Op(key: "a", draft: "d", action: .create, base: 0),
        ]))))
        #expect(out.contains { if case .apply = $0 { return true } else { return false } })
    }

    @Test("the faults command and the flag set it; a knob at zero draws nothing")
    func controlAndFlag() throws {
        #expect(try ServerFaults.off.updated(with: ["dropRequest": 0.5]) == ServerFaults(dropRequest: 0.5))
        #expect(throws: ServerError.self) { _ = try ServerFaults.off.updated(with: ["dropRequest": 1.5]) }
        #expect(ServerFaults(dropRequest: 0.25).fields.contains { $0.0 == "dropRequest" && $0.1 == .double(0.25) })
        let options = try ServerConfiguration.command.parse(["--db", "x.sqlite", "--listen", "tcp://127.0.0.1:1",
                                                             "--drop-request", "0.3"])
        #expect(try ServerConfiguration(options: options).settings.faults.dropRequest == 0.3)
        var generator = SeededGenerator(seed: 3)
        var before = generator
        #expect(!ServerFaults.off.drawDropRequest(using: &generator))
        #expect(generator.next() == before.next())
    }
}
