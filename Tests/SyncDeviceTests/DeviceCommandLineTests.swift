import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The command line: the launcher's flags, their defaults and the errors that name what is wrong.
@Suite struct DeviceCommandLineTests {
    let required = ["--id", "pixel", "--account", "acme", "--token", "t-1", "--platform", "ios",
                    "--db", "/tmp/p.sqlite", "--server", "tcp://127.0.0.1:7001"]

    func configuration(_ extra: [String]) throws -> DeviceConfiguration {
        try DeviceCommandLine.configuration(DeviceCommandLine.spec.parse(required + extra))
    }

    @Test func defaultsMatchTheContract() throws {
        let config = try configuration([])
        let s = config.settings
        #expect(config.identity == DeviceIdentity(device: "pixel", account: "acme", token: "t-1", platform: .ios))
        #expect(s.batch == 50 && s.pageLimit == 200 && s.maxPages == 5 && s.leaseSec == 30)
        #expect(s.replyTimeoutMs == 1_000 && s.maxAttempts == 10)
        #expect(s.backoffBaseSec == 30 && s.backoffCapSec == 3_600)
        #expect(s.desiredIntervalSec == 900 && s.freshnessBudgetSec == 3_600)
        #expect(s.startState == .background && !s.charging && !s.beaconOnClose && s.executionClock == .real)
        #expect(config.name == "pixel" && config.brokerEndpoint == nil && config.seed == 1)
    }

    @Test func everyLauncherFlagIsRead() throws {
        let config = try configuration([
            "--broker", "tcp://127.0.0.1:7002", "--control=ipc:///tmp/c", "--events", "/tmp/e.jsonl", "--name", "p1",
            "--epoch", "1700000000000000", "--time-scale", "3600", "--seed", "42", "--batch", "20",
            "--page-limit", "37",
            "--max-pages", "3", "--lease-sec", "12.5", "--reply-timeout-ms", "250", "--max-attempts", "4",
            "--backoff-base-sec", "5", "--backoff-cap-sec", "60", "--desired-interval-min", "30",
            "--freshness-budget-min", "120", "--engagement", "0.5", "--start-state", "foreground", "--charging",
            "--beacon", "true", "--execution-clock", "simulated",
        ])
        let s = config.settings
        #expect(config.brokerEndpoint == "tcp://127.0.0.1:7002" && config.controlEndpoint == "ipc:///tmp/c")
        #expect(config.clock == SimClock(epochMicros: 1_700_000_000_000_000, scale: 3_600) && config.seed == 42)
        #expect(s.batch == 20 && s.pageLimit == 37 && s.maxPages == 3 && s.leaseSec == 12.5)
        #expect(s.replyTimeoutMs == 250 && s.maxAttempts == 4 && s.backoffBaseSec == 5 && s.backoffCapSec == 60)
        #expect(s.desiredIntervalSec == 1_800 && s.freshnessBudgetSec == 7_200 && s.opensPerDay == 0.5)
        #expect(s.startState == .foreground && s.charging && s.beaconOnClose && s.timeScale == 3_600)
        #expect(s.replyTimeoutSim == 900 && s.executionClock == .simulated && s.executionScale == 1)
        #expect(config.name == "p1")
    }

    @Test func mistakesAreNamed() {
        func message(_ arguments: [String]) -> String {
            do {
                _ = try DeviceCommandLine.configuration(DeviceCommandLine.spec.parse(arguments))
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(message(required + ["--bogus", "1"]).contains("unknown flag --bogus"))
        #expect(message(Array(required.dropFirst(2))).contains("missing --id"))
        #expect(message(required.map { $0 == "ios" ? "symbian" : $0 }).contains("--platform must be"))
        #expect(message(required + ["--batch", "0"]).contains("--batch must be an integer from 1 to 500, got 0"))
        #expect(message(required + ["--start-state", "asleep"]).contains("--start-state"))
        #expect(message(required + ["--backoff-cap-sec", "1"]).contains("--backoff-cap-sec"))
        #expect(message(required + ["--engagement", "-1"]).contains("--engagement"))
        #expect(message(required + ["--time-scale", "0"]).contains("--time-scale must be above 0"))
        #expect(message(required + ["--execution-clock", "wall"]).contains("--execution-clock"))
    }

    @Test func editArgumentsAreCheckedBeforeAnythingIsWritten() throws {
        #expect(try LocalEdit.parse(["draft": "d", "action": "create", "title": "t"])
            == LocalEdit(draft: "d", action: .create, title: "t"))
        #expect(throws: DeviceError.self) { try LocalEdit.parse(["draft": "d", "action": "rename"]) }
        #expect(throws: DeviceError.self) { try LocalEdit.parse(["action": "create"]) }
        #expect(throws: DeviceError.self) { try LocalEdit.parse(["draft": "d", "action": "create", "title": 3]) }
        #expect(throws: DeviceError.self) { try LocalEdit.parse(["draft": "d", "action": "delete", "body": "x"]) }
        #expect(throws: DeviceError.self) { try LocalEdit.parse(["draft": "d", "action": "create", "color": "red"]) }
        #expect(throws: DeviceError.self) {
            let body = JSONValue.string(String(repeating: "x", count: 300_000))
            return try LocalEdit.parse(["draft": "d", "action": "create", "body": body])
        }
    }
}
