import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// Control commands are parsed and checked once, and decided by the instance, for the real shell, a pool's device
/// and the simulation alike.
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
        let refused = ControlAnswer.refused("no")
        #expect(refused.ack(request) == ControlAck(req: 7, ok: false, detail: "no"))
        #expect(ControlAnswer.later.ack(request) == nil)
        let fields = ControlAnswer.later.eventFields(request)
        #expect(fields.map(\.0) == ["command", "args", "ok", "detail"])
        #expect(fields[1].1.description == #"{"a":2,"b":1}"#)
        #expect(fields[3].1 == .string("answered when the pass ends"))
    }

    static func instance() -> DeviceInstance {
        DeviceInstance(identity: DeviceIdentity(device: "pixel", account: "acme", token: "t", platform: .android),
                       settings: DeviceSettings(), brokerEnabled: false, rng: SeededGenerator(seed: 1))
    }

    static let peer: [UInt8] = Array("launcher".utf8)

    /// The instance decides each command without touching the machine: what needs the ledger, the crash points or
    /// the app's files is a directive carrying the request, and everything else is answered in the same step.
    @Test func theInstanceDecidesEveryCommandAndSaysWhatTheDriverMustDo() throws {
        var device = Self.instance()
        _ = device.start(now: 0)
        func decide(_ command: String, _ args: [String: JSONValue] = [:]) -> [DeviceDirective] {
            device.onControl(Self.request(command, args), from: Self.peer, syncToken: 3, now: 1)
        }
        let pending = { (command: String, args: [String: JSONValue]) in
            PendingControl(peer: Self.peer, request: Self.request(command, args))
        }
        let pong = decide("ping")
        #expect(pong.last == .answerControl(to: Self.peer, .controlAck(ControlAck(req: 7, ok: true, detail: "pong"))))
        #expect(pong.first.map { if case .log(let line) = $0 { line.type == "control.received" } else { false } }
            == true)

        let editArgs: [String: JSONValue] = ["draft": "d1", "action": "create", "title": "T"]
        #expect(decide("edit", editArgs) == [.saveEdit(try LocalEdit.parse(editArgs),
                                                       answering: pending("edit", editArgs))])
        #expect(decide("status") == [.answerWithStatus(pending("status", [:]), detail: "ok")])
        #expect(decide("crashAt", ["point": "deviceAfterClaim"])
            == [.armCrash(["point": "deviceAfterClaim"], answering: pending("crashAt", ["point": "deviceAfterClaim"]))])
        #expect(decide("stop").first == .stop)
        #expect(decide("reinstall").last == .reinstall(answering: pending("reinstall", [:])))

        // A sync waits under the driver's token, registered before its pass can end, and is answered later.
        let sync = decide("sync")
        #expect(sync.first == .awaitPass(token: 3, answering: pending("sync", [:])))
        #expect(!sync.contains { if case .answerControl = $0 { true } else { false } })

        // An unknown command or a bad argument is refused in the same step, naming why.
        let refused = decide("dance")
        guard case .answerControl(_, .controlAck(let ack))? = refused.last else {
            Issue.record("no answer to an unknown command")
            return
        }
        #expect(!ack.ok && ack.detail.contains("unknown command"))
        // Frames that are not a control message are answered with an error.
        let garbage = device.onControlFrames([Array("SL1 pull".utf8), Array("{}".utf8)], from: Self.peer,
                                             syncToken: 3, now: 1)
        guard case .answerControl(_, .error)? = garbage.last else {
            Issue.record("no error for a message that is not control: \(garbage)")
            return
        }
    }

    /// The answers the driver asks for once its part is done are the instance's too.
    @Test func theAnswersAfterTheDriversPartAreTheInstances() {
        let device = Self.instance()
        let edit = PendingControl(peer: Self.peer, request: Self.request("edit"))
        let saved = SavedEdit(key: "pixel-1", draft: "d1", action: .create, base: 0)
        #expect(device.onEditAnswer(edit, saved: .success(saved)).last == .answerControl(
            to: Self.peer, .controlAck(ControlAck(req: 7, ok: true, detail: "saved on this device",
                                                  data: .object([("key", "pixel-1"), ("saw", .null)])))))
        // What the user read of the draft as the edit began, for read-your-writes.
        var update = SavedEdit(key: "pixel-2", draft: "d1", action: .update, base: 1)
        update.before = DraftRow(id: "d1", title: "T", body: nil, version: 1, deleted: false)
        #expect(device.onEditAnswer(edit, saved: .success(update)).last == .answerControl(
            to: Self.peer, .controlAck(ControlAck(req: 7, ok: true, detail: "saved on this device", data: .object([
                ("key", "pixel-2"),
                ("saw", .object([("title", "T"), ("body", .null), ("deleted", false), ("version", 1)])),
            ])))))
        #expect(device.onEditAnswer(edit, saved: .failure(.editNotSaved("disk full"))).last == .answerControl(
            to: Self.peer, .controlAck(ControlAck(req: 7, ok: false, detail: "disk full"))))
        let reinstall = PendingControl(peer: Self.peer, request: Self.request("reinstall"))
        guard case .answerControl(_, .controlAck(let ack))? = device.onReinstalled(lost: ["a", "b"],
                                                                                     answering: reinstall).last
        else {
            Issue.record("no answer to reinstall")
            return
        }
        #expect(ack.detail == "reinstalled: 2 unsent ops lost")
    }
}
