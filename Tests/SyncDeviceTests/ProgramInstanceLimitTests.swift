import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The platform's execution limits enforced on an outside program (docs/DEVICE-CONTRACT.md, "Execution limits"):
/// `expire` at the end of the window, the kill after the grace, `pass.end cutOff: true`, and the scheduler told so.
/// A fake clock (one simulated second per second of execution), no sockets, no process.
struct ProgramInstanceLimitTests {
    typealias T = ProgramInstanceTests

    static func iPhone(expirationHandler: Bool = true) -> ProgramInstance {
        var settings = DeviceSettings()
        settings.startState = .background
        settings.timeScale = 1
        settings.expirationHandler = expirationHandler
        return ProgramInstance(identity: DeviceIdentity(device: "i1", account: "a", token: "t", platform: .ios),
                               settings: settings, brokerEnabled: false, answerWithinMs: 2_000,
                               rng: SeededGenerator(seed: 1))
    }

    static func hint(_ p: inout ProgramInstance, head: Int, now: Double) -> [ProgramDirective] {
        p.onBrokerMessage(.hint(Hint(hint: "h-\(head)", account: "a", head: head)),
                          keys: ["account", "head", "hint"], now: now)
    }

    /// A background iPhone's push pass, started at `now`: its request to the program.
    static func pushPass(_ p: inout ProgramInstance, now: Double = 10) throws -> JSONValue {
        _ = p.start(ready: T.ready, now: 0)
        let out = hint(&p, head: 4, now: now)
        let start = try #require(T.events(out).first { $0.type == "pass.start" })
        #expect(start["limitSec"] == .double(30), "an iOS background push gets about 30 s")
        return try #require(T.lines(out).first { $0["type"] == "pass" })
    }

    static func kill(_ out: [ProgramDirective]) -> (reason: String, pass: Int?)? {
        out.lazy.compactMap { if case .killProgram(let r, let p) = $0 { (r, p) } else { nil } }.first
    }

    @Test func aPassThatRunsOverItsWindowIsToldToExpireAndEndsCutOff() throws {
        var p = Self.iPhone()
        let pass = try Self.pushPass(&p)
        #expect(T.lines(p.onTick(now: 39.9)).isEmpty, "the window is not over yet")
        let expired = p.onTick(now: 40)
        let expire = try #require(T.lines(expired).first, "\(expired)")
        #expect(expire["type"] == "expire" && expire["pass"] == pass["pass"])
        #expect(T.events(expired).contains { $0.type == "program.expire" && $0["limitSec"] == .double(30) })
        #expect(T.lines(p.onTick(now: 41)).isEmpty, "expire is said once")
        // The program ends its pass at its next safe point, within the grace.
        let req = try #require(pass["req"]?.intValue)
        let out = p.onProgramLine(T.reply(req, [("cursor", 3), ("head", 4), ("pending", 1), ("outcome", "completed")]),
                                  line: 3, now: 42)
        let end = try #require(T.events(out).first { $0.type == "pass.end" })
        #expect(end["cutOff"] == true && end["outcome"] == "cutOff" && end["success"] == false, "\(end)")
        #expect(Self.kill(out) == nil && p.pass == nil)
        #expect(Self.kill(p.onTick(now: 100)) == nil, "a pass that ended is not killed")
    }

    @Test func aProgramThatIgnoresExpireIsKilledAfterTheGraceAndStartedAgain() throws {
        var p = Self.iPhone()
        let pass = try Self.pushPass(&p)
        _ = p.onTick(now: 40)
        // A second hint during the pass: one follow-up, which runs once the program is back.
        _ = Self.hint(&p, head: 5, now: 41)
        #expect(Self.kill(p.onTick(now: 44.9)) == nil)
        let out = p.onTick(now: 45)
        let kill = try #require(Self.kill(out), "\(out)")
        #expect(kill.pass == pass["pass"]?.intValue && kill.reason.contains("did not end within 5 s"), "\(kill)")
        let end = try #require(T.events(out).first { $0.type == "pass.end" })
        #expect(end["cutOff"] == true && end["outcome"] == "killed", "\(end)")
        #expect(T.failure(out) == nil, "an overrun is the platform's business, not a contract break")
        #expect(T.lines(out).isEmpty, "nothing is written to the dead program")
        // Its late reply (had it been read) is no longer awaited; the program started again runs the follow-up.
        let again = p.restarted(ready: T.ready, now: 46)
        let next = try #require(T.lines(again).first { $0["type"] == "pass" })
        #expect(next["trigger"] == "push" && next["pass"] == 2 && next["head"] == 5)
    }

    @Test func aProgramStartedAgainWhileOfflineIsToldSo() throws {
        var p = Self.iPhone()
        _ = try Self.pushPass(&p)
        _ = p.onControl(Control(req: 7, command: "offline"), from: [1], now: 11)
        _ = p.onTick(now: 40)
        #expect(Self.kill(p.onTick(now: 45)) != nil)
        let again = T.lines(p.restarted(ready: T.ready, now: 46))
        #expect(again.count == 1 && again.first?["type"] == "network" && again.first?["online"] == false, "\(again)")
    }

    @Test func theSchedulerIsToldThePassWasCutOff() throws {
        // Without an expiration handler, iOS halves the budget of an app whose task was cut off.
        var p = Self.iPhone(expirationHandler: false)
        let pass = try Self.pushPass(&p)
        _ = p.onTick(now: 40)
        let out = p.onProgramLine(T.reply(try #require(pass["req"]?.intValue),
                                          [("cursor", 3), ("head", 4), ("pending", 0)]), line: 3, now: 41)
        #expect(T.events(out).contains { $0.type == "budget.shrunk" }, "\(T.events(out).map(\.type))")
    }

    @Test func aPassWithinItsWindowIsNotCutOff() throws {
        var p = Self.iPhone(expirationHandler: false)
        let pass = try Self.pushPass(&p)
        let out = p.onProgramLine(T.reply(try #require(pass["req"]?.intValue),
                                          [("cursor", 4), ("head", 4), ("pending", 0)]), line: 3, now: 39)
        let end = try #require(T.events(out).first { $0.type == "pass.end" })
        #expect(end["cutOff"] == false && end["outcome"] == "completed" && end["success"] == true)
        #expect(!T.events(out).contains { $0.type == "budget.shrunk" })
    }

    @Test func aForegroundPassHasNoWindowAndIsBoundByTheAnswerTimeInstead() throws {
        var p = T.instance(.ios, start: .foreground)
        let out = p.start(ready: T.ready, now: 0)
        let start = try #require(T.events(out).first { $0.type == "pass.start" })
        #expect(start["limitSec"] == nil)
        let late = p.onTick(now: 2)
        #expect(T.lines(late).isEmpty && T.failure(late) == "no answer to request 1 (pass 1) within 2 s")
    }

    @Test func aForceQuitDuringAPassKillsTheProgramWithoutChargingTheBudget() throws {
        var p = Self.iPhone(expirationHandler: false)
        _ = try Self.pushPass(&p)
        let out = p.onControl(Control(req: 7, command: "forceQuit"), from: [1], now: 12)
        #expect(Self.kill(out)?.reason == "force quit during a pass", "\(out)")
        let end = try #require(T.events(out).first { $0.type == "pass.end" })
        #expect(end["cutOff"] == true && end["outcome"] == "killed")
        #expect(!T.events(out).contains { $0.type == "budget.shrunk" }, "the user's force quit is not the app's fault")
        #expect(Self.kill(p.onTick(now: 100)) == nil && p.pass == nil)
    }
}
