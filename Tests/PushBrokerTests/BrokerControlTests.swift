import SyncProtocol
import Testing

@testable import PushBroker

/// The broker's control commands parse into `BrokerControl`, an unknown one to nil; `crashAt` goes through the
/// instance as the device's does: a directive the driver carries out, then the instance answers.
struct BrokerControlTests {
    @Test func theBrokersCommandsParseAndAnUnknownOneDoesNot() {
        for command in ["ping", "stop", "stats", "chaos", "crashAt"] {
            #expect(BrokerControl.parse(Control(req: 1, command: command, args: [:])) != nil, "\(command)")
        }
        #expect(BrokerControl.parse(Control(req: 1, command: "crashat", args: [:])) == nil)
        #expect(BrokerControl.parse(Control(req: 1, command: "chaos", args: ["loss": 1])) == .chaos(["loss": 1]))
    }

    @Test func crashAtIsADirectiveAndTheInstanceAnswers() {
        var driver = InstanceDriver()
        let ack = driver.control("crashAt", ["point": "broker.after-deliver"])
        #expect(ack?.ok == true)
        #expect(driver.directives.contains { if case .armCrash = $0 { return true } else { return false } })
        #expect(driver.events("crash.armed").count == 1 && driver.events("control.received").count == 1)
        let control = Control(req: 9, command: "crashAt", args: ["point": "nowhere"])
        let refused = driver.instance.onCrashArmed(ok: false, detail: "no such point", control: control, peer: [1])
        #expect(!refused.contains { $0.event?.type == "crash.armed" })
        #expect(refused.contains {
            if case .reply(_, _, .controlAck(let a)) = $0 { return !a.ok } else { return false }
        })
    }
}
