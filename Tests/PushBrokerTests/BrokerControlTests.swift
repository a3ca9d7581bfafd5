import SyncProtocol
import Testing

@testable import PushBroker

/// The broker's control commands parse into `BrokerControl`; `crashAt` is the driver's, an unknown one parses to nil.
struct BrokerControlTests {
    @Test func theBrokersCommandsParseAndAnUnknownOneDoesNot() {
        for command in ["ping", "stop", "stats", "chaos"] {
            #expect(BrokerControl.parse(Control(req: 1, command: command, args: [:])) != nil, "\(command)")
        }
        #expect(BrokerControl.parse(Control(req: 1, command: "crashAt", args: [:])) == nil)
        #expect(BrokerControl.parse(Control(req: 1, command: "chaos", args: ["loss": 1])) == .chaos(["loss": 1]))
    }
}
