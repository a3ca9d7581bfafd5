import LabKit
@testable import PushBroker
import SyncProtocol
import Testing

/// Registration, fan-out, bad input, reproducibility and accounting of the pure instance.
@Suite struct BrokerInstanceTests {
    @Test func hintsGoToEveryRegisteredDeviceOfTheAccountButTheOrigin() {
        var driver = InstanceDriver()
        for device in ["pixel", "tablet", "laptop", "other"] { driver.register(device) }
        driver.notice(head: 7, origin: "pixel")
        #expect(driver.received["pixel"] == nil)
        #expect(driver.received["other"] == nil)  // another account
        #expect(driver.received["iphone"] == nil)  // never registered
        #expect(driver.received["laptop"] == [Hint(hint: "h-1", account: "acme", head: 7)])
        #expect(driver.received["tablet"] == [Hint(hint: "h-2", account: "acme", head: 7)])
        let accepted = driver.events("hint.accepted")
        #expect(accepted.count == 2)
        #expect(accepted[0]["seqs"] == .array([7]))
        #expect(accepted[0]["origin"] == "pixel")
    }

    @Test func hintFrameCarriesOnlyTheReference() throws {
        let frames = Codec.encode(.hint(Hint(hint: "h-1", account: "acme", head: 3)))
        let body = try JSONValue.parse(String(decoding: frames[1], as: UTF8.self))
        #expect(Set(body.objectValue?.map(\.0) ?? []) == ["hint", "account", "head"])
    }

    @Test func registrationIsCheckedAgainstTheAccountsFile() {
        var driver = InstanceDriver()
        let cases: [(Register, ErrorCode)] = [
            (Register(device: "ghost", account: "acme", platform: .android, token: "t"), .unknownDevice),
            (Register(device: "pixel", account: "acme", platform: .android, token: "t-wrong"), .badToken),
            (Register(device: "pixel", account: "zen", platform: .android, token: "t-pixel"), .wrongAccount),
            (Register(device: "pixel", account: "acme", platform: .ios, token: "t-pixel"), .invalid),
        ]
        for (register, code) in cases {
            let directives = driver.instance.onRegister(register, peer: Array("p".utf8), now: 0)
            guard case .reply(.devices, _, .error(let error)) = directives.last else {
                Issue.record("no error reply for \(register)")
                continue
            }
            #expect(error.code == code)
            #expect(directives.count == 2)
            let refused = directives.first.map { directive in
                if case .log(let line) = directive { line.type == "request.refused" } else { false }
            }
            #expect(refused == true)
        }
        driver.notice(head: 1)
        #expect(driver.instance.counters.accepted == 0)
        #expect(driver.instance.counters(for: "pixel") == nil)
    }

    @Test func deviceStateOnlyFromTheConnectionThatRegistered() {
        var driver = InstanceDriver()
        driver.state("pixel", online: false)
        guard case .error(let error) = driver.lastReply else {
            Issue.record("no error for deviceState before register")
            return
        }
        #expect(error.code == .notAuthenticated)

        driver.register("pixel")
        driver.state("pixel", online: false, peer: "impostor")
        if case .error(let error) = driver.lastReply { #expect(error.code == .notAuthenticated) }
        driver.notice(head: 1)
        #expect(driver.hintIDs("pixel") == ["h-1"])  // still online: the impostor changed nothing
    }

    @Test func reRegisteringFromANewConnectionMovesHintsThereAndKeepsHeldOnes() {
        var driver = InstanceDriver()
        driver.register("pixel", peer: "old")
        driver.state("pixel", online: false, peer: "old")
        driver.notice(head: 1)
        driver.register("pixel", peer: "new")
        #expect(driver.events("device.registered").last?["replaced"] == true)
        driver.state("pixel", online: true, peer: "new")
        guard case .deliver(_, let peer, let hint, _) = driver.directives.last(where: {
            if case .deliver = $0 { true } else { false }
        }) else {
            Issue.record("nothing delivered")
            return
        }
        #expect(peer == Array("new".utf8))
        #expect(hint.id == "h-1")
    }

    @Test func malformedFramesAreAnsweredWithTheDecodersReasonAndChangeNothing() {
        var driver = InstanceDriver()
        let inputs: [([[UInt8]], ErrorCode)] = [
            ([], .badFrame),
            ([Array("hello".utf8)], .badFrame),
            ([Array("SL9 register".utf8), Array("{}".utf8)], .unsupportedVersion),
            ([Array("SL1 register".utf8), Array("{not json".utf8)], .malformed),
            ([Array("SL1 register".utf8), Array(#"{"device":"pixel"}"#.utf8)], .malformed),
            ([Array("SL1 hint".utf8), Array(#"{"hint":"h","account":"acme","head":1}"#.utf8)], .unexpected),
        ]
        for (frames, code) in inputs {
            driver.deviceFrames(frames, peer: "pixel")
            guard case .error(let error) = driver.lastReply else {
                Issue.record("no error reply for \(frames)")
                continue
            }
            #expect(error.code == code)
            #expect(!error.message.isEmpty)
        }
        #expect(driver.events("request.refused").count == inputs.count)
        #expect(driver.events("device.registered").isEmpty)
    }

    @Test func badNoticesAreLoggedAndIgnored() {
        var driver = InstanceDriver()
        driver.register("pixel")
        let directives = driver.instance.onNoticeMessage([Array("SL1 notice".utf8), Array("[]".utf8)], now: 0)
        #expect(directives.count == 1)
        driver.notice("nobody", head: 1)
        #expect(driver.events("request.refused").last?["message"] == "notice: unknown account \"nobody\"")
        #expect(driver.instance.counters.accepted == 0)
    }

    @Test func controlAnswersPingStatsAndStopAndRefusesUnknownCommands() {
        var driver = InstanceDriver()
        driver.register("pixel")
        driver.notice(head: 1)
        #expect(driver.control("ping")?.ok == true)
        let stats = driver.control("stats")
        #expect(stats?.data?["hints"].flatMap(HintCounters.init) == driver.instance.counters)
        #expect(stats?.data?["devices"]?["pixel"]?["delivered"] == 1)
        #expect(driver.control("dance")?.ok == false)
        #expect(!driver.stopped)
        #expect(driver.control("stop")?.ok == true)
        #expect(driver.stopped)
    }

    @Test func sendFailuresBecomeDropsWithTheirReason() {
        var driver = InstanceDriver()
        driver.register("pixel")
        driver.register("laptop")
        driver.failing = ["pixel": .unreachable, "laptop": .hwm]
        driver.notice(head: 1)
        let reasons = Set(driver.events("hint.dropped").compactMap { $0["reason"]?.stringValue })
        #expect(reasons == ["unreachable", "hwm"])
        #expect(driver.instance.counters.dropped == 2)
        #expect(driver.instance.counters.balances)
    }

    @Test func sameSeedSameDecisionsAnotherSeedOthers() {
        let first = Self.decisionLog(seed: 7)
        #expect(first.count > 1000)
        #expect(first == Self.decisionLog(seed: 7))
        #expect(first != Self.decisionLog(seed: 8))
    }

    @Test func everyHintIsAccountedAfterEveryEvent() {
        var script = SeededGenerator(seed: 2024)
        var driver = Self.chaoticDriver(seed: 5)
        for step in 0..<3000 {
            Self.step(&driver, &script, step: step)
            let counters = driver.instance.counters
            #expect(counters.balances, "step \(step): \(counters)")
            if !counters.balances { return }
        }
        driver.advance(to: driver.now + 10 * 86_400)
        let counters = driver.instance.counters
        #expect(counters.balances)
        #expect(counters.dropped > 0 && counters.duplicated > 0 && counters.coalesced > 0)
        #expect(counters.throttled > 0 && counters.discarded > 0 && counters.expired > 0)
        let received = driver.received.values.reduce(0) { $0 + $1.count }
        #expect(received == counters.delivered + counters.duplicated)
    }

    // MARK: - A scripted, seeded run

    static func chaoticDriver(seed: UInt64) -> InstanceDriver {
        var profiles = ProfileSettings()
        profiles.fcmPriority = .normal
        profiles.fcmMaxHeld = 20
        profiles.webpushTTLSec = 3600
        let chaos = ChaosSettings(loss: 0.3, duplicate: 0.2, delayKind: .exponential, delaySec: 30, reorder: 0.1)
        var driver = InstanceDriver(profiles: profiles, chaos: chaos, seed: seed)
        for device in ["pixel", "tablet", "iphone", "laptop", "other"] { driver.register(device) }
        return driver
    }

    /// One scripted event: the script's own generator decides it, so every seed of the instance sees the same inputs.
    static func step(_ driver: inout InstanceDriver, _ script: inout SeededGenerator, step: Int) {
        let devices = ["pixel", "tablet", "iphone", "laptop", "other"]
        let apps: [AppState] = [.foreground, .background, .background, .closed, .forceQuit]
        driver.advance(to: driver.now + script.exponential(mean: 120))
        if script.chance(0.15) {
            let device = devices[Int(script.next() % UInt64(devices.count))]
            driver.state(device, online: script.chance(0.7), app: apps[Int(script.next() % UInt64(apps.count))],
                         doze: script.chance(0.3), refreshOff: script.chance(0.1))
        } else {
            let account = script.chance(0.8) ? "acme" : "zen"
            driver.notice(account, head: step + 1, origin: devices[Int(script.next() % UInt64(devices.count))])
        }
    }

    static func decisionLog(seed: UInt64) -> [String] {
        var script = SeededGenerator(seed: 99)
        var driver = chaoticDriver(seed: seed)
        for step in 0..<400 { Self.step(&driver, &script, step: step) }
        driver.advance(to: driver.now + 86_400)
        return driver.directives.map(\.description)
    }
}

/// The broker's design switch `hintCarriesData` (issue 13).
@Suite struct HintCarriesDataTests {
    @Test func hintsCarryTheNoticesChangesOnlyWhenSwitchedOnAndOnlyForTheNamedAccounts() {
        var lab = InstanceDriver()
        for device in ["pixel", "laptop"] { lab.register(device) }
        lab.notice(head: 4, origin: "pixel")
        #expect(lab.instance.hintData.isEmpty)
        #expect(lab.events("hint.dataAttached").isEmpty)

        var broken = InstanceDriver()
        broken.instance.hintCarriesData = true
        for device in ["pixel", "laptop"] { broken.register(device) }
        broken.notice(head: 4, origin: "pixel")
        #expect(broken.instance.hintData["h-1"] == .array([.object([("seq", .int(4)), ("draft", "d-4"),
                                                                    ("version", .int(1))])]))
        #expect(broken.events("hint.dataAttached").count == 1)

        var scoped = InstanceDriver()
        scoped.instance.hintCarriesData = true
        scoped.instance.hintDataAccounts = ["globex"]
        for device in ["pixel", "laptop"] { scoped.register(device) }
        scoped.notice(head: 4, origin: "pixel")
        #expect(scoped.instance.hintData.isEmpty)
    }

    @Test func theFlagTurnsItOn() throws {
        let base = ["--listen", "tcp://127.0.0.1:1", "--notices", "tcp://127.0.0.1:2", "--accounts", "a.json"]
        #expect(try BrokerCommand.configuration(from: BrokerCommand.spec.parse(base)).settings.hintCarriesData == false)
        let on = try BrokerCommand.configuration(from: BrokerCommand.spec.parse(base
            + ["--hint-carries-data", "--hint-data-accounts", "x,y"]))
        #expect(on.settings.hintCarriesData && on.settings.hintDataAccounts == ["x", "y"])
    }
}
