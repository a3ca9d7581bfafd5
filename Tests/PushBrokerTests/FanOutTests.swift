@testable import PushBroker
import LabKit
import SyncProtocol
import Testing

/// A notice whose hints nothing can hold back is decided as one `fanOut`: it must decide what the hint-at-a-time path
/// (`accept`, `enterChaos`, the profile) decides, to the directive, the counter and the draw.
@Suite struct FanOutTests {
    /// One scripted run of 600 steps, the same inputs for both ways: hints parked when chaos is turned off, then
    /// devices going on and offline, foreground and background, some sends failing, chaos turned on and off for one
    /// device and for all, notices for both accounts; then a day for what was held.
    static func run(fansOut: Bool, fcmPriority: FCMPriority) -> InstanceDriver {
        var profiles = ProfileSettings()
        profiles.fcmPriority = fcmPriority
        var driver = InstanceDriver(profiles: profiles, seed: 11)
        driver.instance.fansOut = fansOut
        let devices = ["pixel", "tablet", "iphone", "laptop", "other"]
        for device in devices { driver.register(device) }
        // Hints parked by reorder chaos when chaos is turned off: the next notice's hints release them after
        // themselves, so that notice is not a fan-out.
        _ = driver.control("chaos", ["reorder": .double(1)])
        driver.notice("acme", head: 1, origin: "iphone")
        _ = driver.control("chaos", ["off": true])
        driver.notice("acme", head: 2, origin: "iphone")
        var script = SeededGenerator(seed: 2026)
        for step in 0..<600 {
            driver.advance(to: driver.now + script.exponential(mean: 60))
            let device = devices[Int(script.next() % UInt64(devices.count))]
            switch script.next() % 20 {
            case 0, 1:
                driver.state(device, online: script.chance(0.8), app: script.chance(0.5) ? .foreground : .background)
            case 2:
                driver.failing[device] = script.chance(0.5) ? .unreachable : nil
            case 3:
                _ = driver.control("chaos", ["device": .string(device), "loss": .double(0.5), "reorder": .double(0.3)])
            case 4, 5, 6:
                _ = driver.control("chaos", script.chance(0.8) ? ["off": true] : ["duplicate": .double(0.4)])
            default:
                driver.notice(script.chance(0.8) ? "acme" : "zen", head: step + 3, origin: device)
            }
        }
        driver.advance(to: driver.now + 86_400)
        return driver
    }

    @Test(arguments: [FCMPriority.high, .normal])
    func aFanOutDecidesWhatTheHintAtATimePathDecides(fcmPriority: FCMPriority) {
        let fast = Self.run(fansOut: true, fcmPriority: fcmPriority)
        let slow = Self.run(fansOut: false, fcmPriority: fcmPriority)
        #expect(fast.fanOuts > 50, "the fan-out was taken: \(fast.fanOuts) notices")
        #expect(slow.fanOuts == 0)
        #expect(fast.directives.count == slow.directives.count)
        for (index, (one, other)) in zip(fast.directives, slow.directives).enumerated() where one != other {
            Issue.record("directive \(index): \(one) against \(other)")
            break
        }
        #expect(fast.instance.counters == slow.instance.counters)
        #expect(fast.instance.hintNumber == slow.instance.hintNumber)
        for device in ["pixel", "tablet", "iphone", "laptop", "other"] {
            #expect(fast.hintIDs(device) == slow.hintIDs(device), "\(device)'s hints")
        }
        // The same draws: the generators stand at the same place.
        var one = fast.instance.generator, other = slow.instance.generator
        #expect(one.next() == other.next())
    }
}

/// `BrokerDriver` carries a fan-out out as it carries out the directives it stands for: the same calls on its IO in
/// the same order, boundaries and crash points included, for devices alone and on pool connections, with sends that
/// fail, and up to a crash point armed in the middle of a notice.
@Suite struct FanOutDriverTests {
    /// Records every call the driver makes, in order. p0…p3 are on pool connections (A, B), solo and other alone;
    /// sends to other fail.
    final class RecordingIO: BrokerIO {
        var log: [String] = []

        static func peer(_ device: String) -> [UInt8] { Array("peer-\(device)".utf8) }
        static func name(_ peer: [UInt8]) -> String {
            String(decoding: peer, as: UTF8.self).replacingOccurrences(of: "peer-", with: "")
        }

        func bundleRoute(_ peer: [UInt8]) -> (connection: [UInt8], device: [UInt8])? {
            let name = Self.name(peer)
            guard name.hasPrefix("p"), let number = Int(name.dropFirst()) else { return nil }
            return (Array((number % 2 == 0 ? "A" : "B").utf8), Array(name.utf8))
        }
        func sendHints(on connection: [UInt8], _ hints: [(device: [UInt8], body: [UInt8])]) -> [SendFailure?] {
            let entries = hints.map { "\(Self.name($0.device)):\(String(decoding: $0.body, as: UTF8.self))" }
            log.append("bundle \(Self.name(connection)) " + entries.joined(separator: " "))
            return hints.map { _ in nil }
        }
        func sendHint(to peer: [UInt8], body: [UInt8]) -> SendFailure? {
            log.append("send \(Self.name(peer)) \(String(decoding: body, as: UTF8.self))")
            return Self.name(peer) == "other" ? .unreachable : nil
        }
        func emitHintEvent(_ directive: BrokerDirective) { log.append("event \(directive)") }
        func emit(_ type: String, _ fields: [(String, JSONValue)]) {
            log.append("event \(type) \(JSONValue.object(fields))")
        }
        var nanos: UInt64 { 0 }
        var nowSim: Double { 1 }
        func flushEvents() { log.append("flush") }
        func reply(on socket: BrokerSocket, to peer: [UInt8], _ frames: [[UInt8]]) { log.append("reply") }
        func die(at point: CrashPoint, nth: Int, work: Int) { log.append("die \(point.rawValue) \(nth)") }
        func dies(after boundary: BrokerBoundary) -> Bool {
            log.append("boundary \(boundary.rawValue)")
            return false
        }
    }

    static let devices = ["p0", "p1", "p2", "p3", "solo", "other"]

    /// Registers the devices, then five notices from elsewhere and one from p0; returns the IO's log, whether the
    /// driver was killed, and whether the instance decides the first notice as a fan-out.
    static func run(fansOut: Bool, crashAt: [ArmedCrash] = []) throws
        -> (log: [String], killed: Bool, fannedOut: Bool)
    {
        let directory = try AccountDirectory(devices.map {
            AccountDirectory.Entry(device: $0, account: "acme", platform: .android, token: "t-\($0)")
        })
        var configuration = BrokerConfiguration(listen: "inproc://d", notices: "inproc://n", accountsPath: "a.json")
        configuration.process.crashAt = crashAt
        let io = RecordingIO()
        let driver = BrokerDriver(configuration, directory: directory, io: io)
        driver.instance.fansOut = fansOut
        for device in devices {
            driver.onDeviceFrames(Codec.encode(.register(Register(device: device, account: "acme",
                                                                  platform: .android, token: "t-\(device)"))),
                                  peer: RecordingIO.peer(device), now: 0)
        }
        io.log.removeAll()
        let notices = (1...6).map { head in
            Notice(account: "acme", head: head, origin: head == 6 ? "p0" : "elsewhere",
                   changes: [ChangeRef(seq: head, draft: "d", version: head)])
        }
        var copy = driver.instance
        let fannedOut = copy.onNotice(notices[0], now: 1).contains { if case .fanOut = $0 { true } else { false } }
        for notice in notices {
            driver.onNoticeFrames(Codec.encode(.notice(notice)), now: Double(notice.head))
        }
        return (io.log, driver.killed, fannedOut)
    }

    @Test func theSameCallsInTheSameOrder() throws {
        let fast = try Self.run(fansOut: true)
        let slow = try Self.run(fansOut: false)
        #expect(fast.fannedOut && !slow.fannedOut)
        #expect(fast.log.filter { $0.hasPrefix("boundary") }.count > 100)
        #expect(fast.log.count == slow.log.count)
        for (index, (one, other)) in zip(fast.log, slow.log).enumerated() where one != other {
            Issue.record("call \(index): \(one) against \(other)")
            break
        }
    }

    @Test(arguments: [CrashPoint.brokerAfterAcceptBeforeDeliver, .brokerAfterDeliver])
    func theSameCallsUpToACrashPointInTheMiddleOfANotice(point: CrashPoint) throws {
        // The 9th of 6 notices × 6 hints: in the second notice, after some of its hints and before others.
        let armed = [ArmedCrash(point: point, nth: 9)]
        let fast = try Self.run(fansOut: true, crashAt: armed)
        let slow = try Self.run(fansOut: false, crashAt: armed)
        #expect(fast.fannedOut && fast.killed && slow.killed)
        #expect(fast.log.contains("die \(point.rawValue) 9"))
        #expect(fast.log == slow.log)
    }
}
