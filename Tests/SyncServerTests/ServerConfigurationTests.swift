import LabTestSupport
import LabKit
import SQLite
import Testing

@testable import SyncServer

@Suite("ServerConfiguration")
struct ServerConfigurationTests {
    func configuration(_ arguments: [String]) throws -> ServerConfiguration {
        try ServerConfiguration(options: ServerConfiguration.command.parse(arguments))
    }

    @Test("defaults, and every flag read")
    func flags() throws {
        let plain = try configuration(["--db", "s.sqlite", "--listen", "tcp://127.0.0.1:5550"])
        #expect(plain.notify == nil && plain.settings.notifyMode == .push && plain.settings.notifyHighWaterMark == 1000)
        #expect(plain.name == "server" && plain.process.seed == 1 && plain.process.timeScale == 1
            && plain.settings.faults == .off)
        #expect(plain.settings.synchronous == .normal && plain.process.epochMicros == nil
            && plain.process.control == nil)

        let full = try configuration([
            "--db=s.sqlite", "--listen", "ipc:///tmp/x", "--notify", "tcp://127.0.0.1:5560", "--notify-mode", "pub",
            "--notify-hwm", "5", "--accounts", "a.json", "--control", "ipc:///tmp/c", "--events", "e.jsonl",
            "--name", "srv", "--epoch", "1700000000000000", "--time-scale", "3600", "--seed", "42",
            "--drop-reply", "0.1", "--transient", "0.2", "--reject", "0.3", "--reply-delay-ms", "50",
            "--synchronous", "full",
        ])
        #expect(full.databasePath == "s.sqlite" && full.listen == "ipc:///tmp/x")
        #expect(full.notify == "tcp://127.0.0.1:5560" && full.settings.notifyMode == .pub
            && full.settings.notifyHighWaterMark == 5)
        #expect(full.accountsPath == "a.json" && full.process.control == "ipc:///tmp/c"
            && full.process.events == "e.jsonl")
        #expect(full.name == "srv" && full.process.epochMicros == 1_700_000_000_000_000
            && full.process.timeScale == 3600)
        #expect(full.process.seed == 42 && full.settings.synchronous == .full)
        #expect(full.settings.faults == ServerFaults(dropReply: 0.1, transient: 0.2, reject: 0.3, replyDelayMs: 50))
    }

    @Test("bad values are usage errors that name the flag")
    func badValues() {
        let base = ["--db", "s", "--listen", "tcp://127.0.0.1:1"]
        let cases: [([String], String)] = [
            (["--db", "s"], "--listen"),
            (base + ["--notify-mode", "carrier-pigeon"], "--notify-mode"),
            (base + ["--notify-hwm", "0"], "--notify-hwm"),
            (base + ["--time-scale", "-1"], "--time-scale"),
            (base + ["--seed", "-3"], "--seed"),
            (base + ["--drop-reply", "1.5"], "--drop-reply"),
            (base + ["--reply-delay-ms", "soon"], "--reply-delay-ms"),
            (base + ["--synchronous", "off"], "--synchronous"),
            (base + ["--frobnicate"], "--frobnicate"),
            (base + ["stray"], "stray"),
        ]
        for (arguments, named) in cases {
            do {
                _ = try configuration(arguments)
                Issue.record("accepted \(arguments)")
            } catch {
                #expect("\(error)".contains(named), "\(error) should name \(named)")
            }
        }
    }

    @Test("the help names every flag with its default and says how to start one by hand")
    func help() {
        let help = ServerConfiguration.command.help
        for flag in ServerConfiguration.command.flags {
            #expect(help.contains("--\(flag.name)"))
            if let value = flag.defaultValue { #expect(help.contains("(default: \(value))")) }
        }
        #expect(help.contains("synclab-server --db server.sqlite --listen"))
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 120 })
    }
}
