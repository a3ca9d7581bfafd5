import SyncProtocol
import Testing

@testable import SyncServer

/// The server's control commands parse into `ServerControl`, every one it lists, and `crashAt` goes through the
/// instance as the device's does: a directive the driver carries out, then the instance answers.
struct ServerControlTests {
    @Test func everyListedCommandParsesAndAnUnknownOneDoesNot() {
        for command in ServerInstance.controlCommands {
            #expect(ServerControl.parse(Control(req: 1, command: command, args: [:])) != nil, "\(command)")
        }
        #expect(ServerControl.parse(Control(req: 1, command: "Faults", args: [:])) == nil)
        let faults = Control(req: 1, command: "faults", args: ["reject": 0.5])
        #expect(ServerControl.parse(faults) == .faults(["reject": 0.5]))
    }

    @Test func crashAtIsADirectiveAndTheInstanceAnswers() throws {
        var instance = ServerInstance(devices: [], heads: [:], seed: 1)
        let peer = Peer(routingID: [1])
        let args: [String: JSONValue] = ["point": "server.after-notice"]
        let frames = Codec.encode(.control(Control(req: 4, command: "crashAt", args: args)))
        let out = instance.onControlMessage(from: peer, frames: frames)
        guard case .armCrash(let given, let ticket)? = out.first, out.count == 1 else {
            Issue.record("expected one armCrash directive, got \(out)")
            return
        }
        #expect(given == args && ticket.req == 4)
        let armed = instance.onCrashArmed(ok: true, detail: "armed server.after-notice", ticket: ticket)
        #expect(armed.contains { if case .log(let e) = $0 { return e.type == "crash.armed" } else { return false } })
        #expect(armed.contains {
            if case .controlReply(_, .controlAck(let ack)) = $0 { return ack.ok && ack.req == 4 } else { return false }
        })
        let refused = instance.onCrashArmed(ok: false, detail: "no such point", ticket: ticket)
        #expect(!refused.contains { if case .log(let e) = $0 { return e.type == "crash.armed" } else { return false } })
        #expect(refused.contains {
            if case .controlReply(_, .controlAck(let ack)) = $0 { return !ack.ok } else { return false }
        })
    }
}
