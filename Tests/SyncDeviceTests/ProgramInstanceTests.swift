import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The lab side of an outside device, pure: what it sends the program, what it writes, and every way a program's
/// line breaks the contract (docs/DEVICE-CONTRACT.md), with a fake clock and no sockets.
struct ProgramInstanceTests {
    static func instance(_ platform: Platform = .android, start: StartState = .foreground) -> ProgramInstance {
        var settings = DeviceSettings()
        settings.startState = start
        settings.timeScale = 1
        return ProgramInstance(identity: DeviceIdentity(device: "p1", account: "a", token: "t", platform: platform),
                               settings: settings, brokerEnabled: false, answerWithinMs: 2_000,
                               rng: SeededGenerator(seed: 1))
    }

    static let ready = JSONValue.object([("type", "ready"), ("cursor", 3), ("head", 3), ("pending", 0)])

    /// The lines sent to the program.
    static func lines(_ out: [ProgramDirective]) -> [JSONValue] {
        out.compactMap { if case .toProgram(let v) = $0 { v } else { nil } }
    }

    static func events(_ out: [ProgramDirective]) -> [EventLine] {
        out.compactMap { if case .log(let line) = $0 { line } else { nil } }
    }

    static func failure(_ out: [ProgramDirective]) -> String? {
        out.lazy.compactMap { if case .fail(let reason) = $0 { reason } else { nil } }.first
    }

    static func reply(_ req: Int, _ fields: [(String, JSONValue)]) -> JSONValue {
        .object([("type", "reply"), ("req", .int(req)), ("ok", true)] + fields)
    }

    @Test func aForegroundStartRunsAPassAndItsReplyEndsIt() throws {
        var p = Self.instance()
        let out = p.start(ready: Self.ready, now: 0)
        let pass = try #require(Self.lines(out).first { $0["type"] == "pass" })
        #expect(pass["trigger"] == "foreground" && pass["pass"] == 1 && pass["head"] == 3)
        #expect(Self.events(out).contains { $0.type == "pass.start" })
        let req = try #require(pass["req"]?.intValue)
        let end = p.onProgramLine(Self.reply(req, [("cursor", 5), ("head", 5), ("pending", 0), ("sent", 1),
                                                   ("pulled", 2)]), line: 2, now: 10)
        let line = try #require(Self.events(end).first { $0.type == "pass.end" })
        #expect(line["cursor"] == 5 && line["sent"] == 1 && line["pulled"] == 2 && line["outcome"] == "completed")
        #expect(p.cursor == 5 && p.pass == nil)
    }

    @Test func triggersDuringAPassBecomeOneFollowUp() throws {
        var p = Self.instance()
        let req = try #require(Self.lines(p.start(ready: Self.ready, now: 0)).first?["req"]?.intValue)
        for _ in 0..<3 {
            let out = p.onControl(Control(req: 1, command: "sync"), from: [1], now: 1)
            #expect(Self.lines(out).isEmpty)
            #expect(Self.events(out).contains { $0.type == "trigger" && $0["coalesced"] == true })
        }
        let end = p.onProgramLine(Self.reply(req, [("cursor", 3), ("head", 3), ("pending", 0)]), line: 2, now: 2)
        let next = Self.lines(end).filter { $0["type"] == "pass" }
        #expect(next.count == 1 && next.first?["trigger"] == "manual")
        // The three syncs are answered when the follow-up ends, not before.
        #expect(!end.contains { if case .answer = $0 { true } else { false } })
        let done = p.onProgramLine(Self.reply(try #require(next.first?["req"]?.intValue),
                                              [("cursor", 3), ("head", 3), ("pending", 0)]), line: 3, now: 3)
        #expect(done.filter { if case .answer = $0 { true } else { false } }.count == 3)
    }

    @Test func aForceQuitIPhoneIgnoresItsHintAndTellsTheProgramNothing() {
        var p = Self.instance(.ios, start: .background)
        _ = p.start(ready: Self.ready, now: 0)
        _ = p.onControl(Control(req: 1, command: "forceQuit"), from: [1], now: 1)
        let out = p.onBrokerMessage(.hint(Hint(hint: "h-1", account: "a", head: 4)),
                                    keys: ["account", "head", "hint"], now: 2)
        #expect(Self.lines(out).isEmpty)
        #expect(Self.events(out).map(\.type) == ["hint.received", "hint.ignored"])
    }

    @Test(arguments: [
        (#"{"type":"event","event":"op.saved","fields":{"draft":"d"}}"#, "op.saved lacks its field \"key\""),
        (#"{"type":"event","event":"cursor.moved","fields":{"from":"1","to":2,"pass":1}}"#,
         "cursor.moved.from must be integer"),
        (#"{"type":"event","event":"pass.start","fields":{"pass":1,"trigger":"push"}}"#,
         "pass.start is written by the lab"),
        (#"{"type":"event","event":"hint.accepted","fields":{}}"#, "is not a device event"),
        (#"{"type":"event","event":"op.result","fields":{"key":"k","outcome":"applied","colour":1}}"#,
         "a field \"colour\" the catalogue does not declare"),
        (#"{"type":"reply","req":99,"ok":true}"#, "request 99, which the lab is not waiting for"),
        (#"{"type":"hello"}"#, "\"type\" must be event or reply"),
        (#"{"type":"ready"}"#, "a second \"ready\""),
    ])
    func aLineThatBreaksTheContractFailsNamingIt(_ text: String, _ words: String) throws {
        var p = Self.instance(start: .background)
        _ = p.start(ready: Self.ready, now: 0)
        let out = p.onProgramLine(try JSONValue.parse(text), line: 4, now: 1)
        let reason = try #require(Self.failure(out), "\(out)")
        #expect(reason.hasPrefix("line 4: ") && reason.contains(words), "\(reason)")
        #expect(Self.events(out).isEmpty)
        // Once failed, nothing more reaches the program.
        #expect(Self.lines(p.onControl(Control(req: 2, command: "sync"), from: [1], now: 2)).isEmpty)
    }

    @Test func aGoodEventIsWrittenAndAMovedCursorRemembered() {
        var p = Self.instance(start: .background)
        _ = p.start(ready: Self.ready, now: 0)
        let text = #"{"type":"event","event":"cursor.moved","fields":{"from":3,"to":7,"pass":1}}"#
        let out = p.onProgramLine(try! JSONValue.parse(text), line: 2, now: 1)
        #expect(Self.failure(out) == nil)
        #expect(Self.events(out).map(\.type) == ["cursor.moved"])
        #expect(p.cursor == 7)
    }

    @Test func aProgramThatDoesNotAnswerFailsAndItsWaitingEditIsAnswered() throws {
        var p = Self.instance(start: .background)
        _ = p.start(ready: Self.ready, now: 0)
        let edit = Control(req: 5, command: "edit", args: ["draft": "d", "action": "create"])
        #expect(Self.lines(p.onControl(edit, from: [9], now: 0)).first?["type"] == "edit")
        #expect(Self.failure(p.onTick(now: 1.9)) == nil)
        let out = p.onTick(now: 2)
        #expect(Self.failure(out) == "no answer to request 1 (edit) within 2 s")
        let ack = out.compactMap { if case .answer(_, let ack) = $0 { ack } else { nil } }.first
        #expect(ack?.ok == false && ack?.req == 5)
    }

    @Test func reinstallAndCrashPointsAreRefusedByName() {
        var p = Self.instance()
        _ = p.start(ready: Self.ready, now: 0)
        for command in ["reinstall", "crashAt"] {
            let out = p.onControl(Control(req: 1, command: command), from: [1], now: 1)
            let ack = out.compactMap { if case .answer(_, let ack) = $0 { ack } else { nil } }.first
            #expect(ack?.ok == false && ack?.detail.contains("not supported for an outside device") == true)
            #expect(Self.lines(out).isEmpty)
        }
    }
}
