import Foundation
import LabKit
@testable import PushBroker
import Testing

/// Flag parsing into a configuration, and the accounts file.
@Suite struct BrokerCommandTests {
    static let required = ["--listen", "tcp://127.0.0.1:1", "--notices", "tcp://127.0.0.1:2", "--accounts", "a.json"]

    static func configuration(_ extra: [String]) throws -> BrokerConfiguration {
        try BrokerCommand.configuration(from: BrokerCommand.spec.parse(required + extra))
    }

    @Test func defaultsAreTheDocumentedOnes() throws {
        let config = try Self.configuration([])
        #expect(config.settings.noticesMode == .pull && config.settings.noticesHWM == 1000
            && config.settings.hintHWM == 1000)
        #expect(config.name == "broker" && config.process.seed == 1 && config.process.timeScale == 1)
        #expect(config.process.control == nil && config.settings == BrokerSettings())
        #expect(config.settings.profiles == ProfileSettings())
        #expect(config.settings.profiles.apnsThrottlePerHour == 3 && config.settings.profiles.fcmMaxHeld == 100)
        #expect(config.settings.profiles.fcmPriority == .high && config.settings.profiles.dozeWindowSec == 3600)
        #expect(config.settings.profiles.webpushTTLSec == 86_400)
        #expect(config.settings.chaos == .off && config.settings.reorderWindowSec == 60)
    }

    @Test func everyKnobIsParsed() throws {
        let config = try Self.configuration([
            "--notices-mode=sub", "--notices-hwm", "5", "--hint-hwm", "7", "--control", "ipc://c", "--events", "e",
            "--name", "b2", "--epoch", "1700000000000000", "--time-scale", "3600", "--seed", "42",
            "--profile-android", "webpush", "--profile-ios", "fcm", "--profile-web", "apns",
            "--apns-throttle-per-hour", "2", "--fcm-max-held", "10", "--fcm-priority", "normal",
            "--fcm-collapse", "account", "--doze-window-min", "15", "--webpush-ttl-sec", "60",
            "--loss", "0.3", "--duplicate", "0.2", "--delay-kind", "exponential", "--delay-sec", "1.5",
            "--reorder", "0.1", "--reorder-window-sec", "5",
        ])
        #expect(config.settings.noticesMode == .sub && config.settings.noticesHWM == 5 && config.settings.hintHWM == 7)
        #expect(config.process.control == "ipc://c" && config.process.events == "e" && config.name == "b2")
        #expect(config.process.epochMicros == 1_700_000_000_000_000 && config.process.timeScale == 3600
            && config.process.seed == 42)
        #expect(config.settings.profiles.kind(for: .android) == .webpush
            && config.settings.profiles.kind(for: .ios) == .fcm)
        #expect(config.settings.profiles.kind(for: .web) == .apns)
        #expect(config.settings.profiles.apnsThrottlePerHour == 2 && config.settings.profiles.fcmMaxHeld == 10)
        #expect(config.settings.profiles.fcmPriority == .normal && config.settings.profiles.fcmCollapse == .account)
        #expect(config.settings.profiles.dozeWindowSec == 900 && config.settings.profiles.webpushTTLSec == 60)
        #expect(config.settings.chaos == ChaosSettings(loss: 0.3, duplicate: 0.2, delayKind: .exponential,
            delaySec: 1.5,
                                              reorder: 0.1))
        #expect(config.settings.reorderWindowSec == 5)
    }

    @Test(arguments: [
        ["--loss", "1.5"], ["--fcm-priority", "urgent"], ["--profile-ios", "gcm"], ["--hint-hwm", "-1"],
        ["--seed", "minus"], ["--time-scale", "0"], ["--delay-kind", "sometimes"], ["--notices-mode", "req"],
        ["--bogus", "1"], ["stray"],
    ])
    func badFlagsAreUsageErrorsNamingTheFlag(_ extra: [String]) {
        #expect(throws: LabError.self) { try Self.configuration(extra) }
        do {
            _ = try Self.configuration(extra)
        } catch {
            let named = extra[0].hasPrefix("--") ? extra[0] : "stray"
            #expect("\(error)".contains(named))
        }
    }

    @Test func missingRequiredFlagIsNamed() {
        do {
            _ = try BrokerCommand.configuration(from: BrokerCommand.spec.parse(["--listen", "x", "--notices", "y"]))
            Issue.record("accepted a command line without --accounts")
        } catch {
            #expect("\(error)".contains("--accounts"))
        }
    }

    @Test func helpShowsEveryFlagWithItsDefault() {
        let help = BrokerCommand.spec.help
        for flag in BrokerCommand.spec.flags {
            #expect(help.contains("--\(flag.name)"))
            if let value = flag.defaultValue {
                #expect(help.contains("(default: \(value))"), "--\(flag.name)")
            } else {
                #expect(flag.help.contains("required") || flag.help.contains("default:"), "--\(flag.name)")
            }
        }
    }

    @Test func accountsFileIsReadWithCommentsAndChecked() throws {
        let text = """
            // written by the launcher
            {"accounts": [{"id": "acme", "devices": [
                {"id": "pixel", "platform": "android", "token": "t-1"},
                {"id": "iphone", "platform": "ios", "token": "t-2"},
            ]}, {"id": "empty", "devices": []}]}
            """
        let directory = try AccountDirectory.parse(Data(text.utf8), source: "accounts.json")
        #expect(directory["iphone"] == .init(device: "iphone", account: "acme", platform: .ios, token: "t-2"))
        #expect(directory.accounts == ["acme", "empty"])

        let duplicate = #"{"accounts": [{"id": "a", "devices": [{"id": "x", "platform": "web", "token": "t"},"#
            + #"{"id": "x", "platform": "web", "token": "u"}]}]}"#
        // The server's reader and words: the file, the key, the problem.
        #expect(throws: BrokerError.config("accounts.json: accounts[0].devices[1].id: device \"x\" appears twice")) {
            try AccountDirectory.parse(Data(duplicate.utf8), source: "accounts.json")
        }
        let badPlatform = #"{"accounts": [{"id": "a", "devices": [{"id": "x", "platform": "palm", "token": "t"}]}]}"#
        do {
            _ = try AccountDirectory.parse(Data(badPlatform.utf8), source: "accounts.json")
            Issue.record("accepted platform palm")
        } catch {
            #expect("\(error)" == "accounts.json: accounts[0].devices[0].platform: must be one of android, ios, web")
        }
    }
}
