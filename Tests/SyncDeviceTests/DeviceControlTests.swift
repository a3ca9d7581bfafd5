import SyncProtocol
import Testing
@testable import SyncDevice

/// Control commands are parsed and checked once, for the real shell and the simulation's alike.
@Suite struct DeviceControlTests {
    static func request(_ command: String, _ args: [String: JSONValue] = [:]) -> Control {
        Control(req: 7, command: command, args: args)
    }

    @Test func everyKnownCommandParsesToItsTypedForm() throws {
        for command in DeviceControl.commands {
            var args: [String: JSONValue] = [:]
            if command == "edit" { args = ["draft": "d1", "action": "create", "title": "T"] }
            if command == "engagement" { args = ["opensPerDay": .double(2)] }
            if command == "refresh" { args = ["on": .bool(false)] }
            _ = try DeviceControl.parse(Self.request(command, args))
        }
        guard case .sync(let force) = try DeviceControl.parse(Self.request("sync", ["force": .bool(true)])) else {
            Issue.record("sync did not parse to .sync")
            return
        }
        #expect(force)
        guard case .lifecycle(.engagement(let opens)) = try DeviceControl.parse(
            Self.request("engagement", ["opensPerDay": .double(2.5)])) else {
            Issue.record("engagement did not parse")
            return
        }
        #expect(opens == 2.5)
    }

    @Test(arguments: [
        ("dance", [:], "dance: unknown command; a device knows ping, edit"),
        ("engagement", ["opensPerDay": JSONValue.double(-1)], "\"opensPerDay\" must be a number ≥ 0"),
        ("refresh", [:], "\"on\" must be true or false"),
        ("sync", ["force": JSONValue.string("yes")], "\"force\" must be true or false"),
    ] as [(String, [String: JSONValue], String)])
    func aBadCommandIsRefusedNamingWhy(command: String, args: [String: JSONValue], words: String) {
        do {
            _ = try DeviceControl.parse(Self.request(command, args))
            Issue.record("\(command) was accepted")
        } catch {
            #expect("\(error)".contains(words), "\(error)")
        }
    }

    @Test func theOutcomeIsWrittenAndAcknowledgedTheSameWayByEveryShell() {
        let request = Self.request("status", ["b": .int(1), "a": .int(2)])
        let refused = ControlOutcome.refused("no")
        #expect(refused.ack(request) == ControlAck(req: 7, ok: false, detail: "no"))
        #expect(ControlOutcome.later.ack(request) == nil)
        let fields = ControlOutcome.later.eventFields(request)
        #expect(fields.map(\.0) == ["command", "args", "ok", "detail"])
        #expect(fields[1].1.description == #"{"a":2,"b":1}"#)
        #expect(fields[3].1 == .string("answered when the pass ends"))
    }
}
