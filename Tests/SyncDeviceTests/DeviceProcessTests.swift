import Foundation
import LabControl
import LabKit
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// The `synclab-device` executable as a real process over real sockets (no server needed for these).
@Suite(.serialized) struct DeviceProcessTests {
    /// `synclab-device` run to its end with `arguments`: its status and what it wrote.
    func device(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(Binaries.path("synclab-device"), arguments)
    }

    @Test func helpAndUsageErrors() async throws {
        try await onOwnThread {
            let help = try device(["--help"])
            #expect(help.status == 0)
            let flags = ["--id", "--reply-timeout-ms", "--backoff-cap-sec", "--start-state", "--engagement",
                         "default: 50"]
            for flag in flags {
                #expect(help.output.contains(flag), "help lacks \(flag)")
            }
            let unknown = try device(["--frobnicate"])
            #expect(unknown.status == 2)
            #expect(unknown.output.contains("--frobnicate"))
            let missing = try device(["--id", "x"])
            #expect(missing.status == 2)
            #expect(try device(["status", "--help"]).status == 0)
            #expect(try device(["status", "--db", "/nonexistent.sqlite"]).status == 1)
        }
    }

    /// A device "solo" in a fresh folder, whose server endpoint nothing listens on: every pass times out and the
    /// device keeps serving.
    final class Solo {
        let folder = TempFolder()
        let context: Context
        let control: ControlClient
        var controlEndpoint: String { folder.ipc("control.sock") }
        var events: [JSONValue] { readEvents(folder.file("solo.jsonl")) }

        /// Raw frames to its control socket: the first reply, decoded.
        func raw(_ frames: [[UInt8]]) throws -> Message? { try rawControl(context, endpoint: controlEndpoint, frames) }

        init() throws {
            context = try Context()
            control = try controlClient(context, endpoint: folder.ipc("control.sock"))
        }

        /// Starts the process (again, on the same files) and waits until it answers `ping`.
        func start() throws -> ChildProcess {
            try startDevice([
                "--id", "solo", "--account", "acme", "--token", "t-solo", "--platform", "android",
                "--db", folder.file("solo.sqlite"), "--server", folder.ipc("nobody.sock"), "--control", controlEndpoint,
                "--events", folder.file("solo.jsonl"), "--reply-timeout-ms", "200", "--start-state", "foreground",
                "--time-scale", "60",
            ], log: folder.file("solo.log"), control: control, who: "solo")
        }
    }

    /// `reinstall`: the app deleted and installed again. Its unsent ops go with the deleted file, a new install id
    /// makes new keys, and `app.reinstalled` names what was lost.
    @Test func aReinstallWipesTheLedgerAndNamesTheUnsentOpsItLost() async throws {
        try await onOwnThread {
            let solo = try Solo()
            let child = try solo.start()
            let control = solo.control
            let first = try #require(try control.data("edit", ["draft": "d1", "action": "create"])?["key"]?.stringValue)
            let second = try #require(try control.data("edit",
                ["draft": "d2", "action": "create"])?["key"]?.stringValue)
            let lost = try #require(try control.data("reinstall"))
            #expect(lost["lost"] == 2)
            #expect(lost["keys"] == .array([.string(first), .string(second)]))
            let status = try #require(try control.data("status"))
            #expect(status["pending"] == 0)
            #expect(status["cursor"] == 0)
            #expect(status["app"] == "closed")
            let next = try #require(try control.data("edit", ["draft": "d3", "action": "create"])?["key"]?.stringValue)
            // A new install id: the new key shares nothing with the old ones but the device id and its counter.
            #expect(next.split(separator: "-")[1] != first.split(separator: "-")[1])
            #expect(next.hasSuffix("-1"))
            #expect(try control.data("stop") != nil)
            #expect(child.wait(timeout: 10) == 0)
            let reinstalled = solo.events.filter { $0["type"] == "app.reinstalled" }
            #expect(reinstalled.count == 1)
            #expect(reinstalled.first?["lost"] == 2)
            #expect(reinstalled.first?["oldInstall"] != reinstalled.first?["install"])
        }
    }

    @Test func itServesControlRefusesBadInputAndKeepsItsEditsAcrossSIGKILL() async throws {
        try await onOwnThread {
            let solo = try Solo()
            let child = try solo.start()
            let control = solo.control

            let saved = try control.data("edit", ["draft": "d1", "action": "create", "title": "Hello", "body": "x"])
            let key = try #require(saved?["key"]?.stringValue)
            #expect(key.hasPrefix("solo-"))

            // Bad input: each refused (ok: false) with a detail that says why; nothing written; still serving.
            func refusal(_ command: String, _ args: [String: JSONValue] = [:]) throws -> String? {
                if let ack = try control.ack(command, args), !ack.ok { return ack.detail }
                return nil
            }
            #expect(try refusal("edit", ["draft": "d2", "action": "rename"])?.contains("action") == true)
            #expect(try refusal("teleport")?.contains("unknown command") == true)
            #expect(try refusal("engagement", ["opensPerDay": "lots"])?.contains("opensPerDay") == true)
            #expect(try refusal("sync", ["force": "yes"])?.contains("force") == true)
            let garbage = try solo.raw([Array("SL1 control".utf8), Array("{not json".utf8)])
            if case .error(let error) = garbage { #expect(error.code == .malformed) } else { Issue.record("no error") }
            let wrongVersion = try solo.raw([Array("SL9 control".utf8), Array("{}".utf8)])
            if case .error(let error) = wrongVersion { #expect(error.code == .unsupportedVersion) } else {
                Issue.record("no error for a wrong version")
            }
            let huge = [UInt8](repeating: 0x20, count: 2 * Limits.maxBodyBytes)
            let oversized = try solo.raw([Array("SL1 control".utf8), huge])
            if case .error(let error) = oversized { #expect(error.code == .tooLarge) } else {
                Issue.record("no error for an oversized frame")
            }

            // The control subcommand a person uses by hand.
            let byHand = try device(["control", "--to", solo.controlEndpoint, "edit",
                                     "{\"draft\": \"d3\", \"action\": \"create\"}"])
            #expect(byHand.status == 0)
            #expect(byHand.output.contains("\"key\":\"solo-"))
            let refused = try device(["control", "--to", solo.controlEndpoint, "teleport"])
            #expect(refused.status == 1)
            #expect(try device(["control", "ping"]).status == 2)

            // A manual sync against a server that never answers ends (timeout) and is answered.
            let synced = try #require(try control.data("sync", timeoutMs: 10_000))
            #expect(synced["pending"] == 2)
            #expect(synced["ops"]?["savedOnDevice"] == 2)
            #expect(synced["freshness"]?["kind"] == "neverSynced")
            let status = try #require(try control.data("status"))
            #expect(status["device"] == "solo")
            #expect(status["guarantee"]?["kind"] == "periodic")
            #expect(status["metrics"]?["passes"]?["total"]?.intValue ?? 0 >= 1)

            // SIGKILL, restart on the same file: the op is still there with its key.
            child.killNow()
            let printed = try device(["status", "--db", solo.folder.file("solo.sqlite"), "--json"])
            #expect(printed.status == 0)
            let stored = try JSONValue.parse(printed.output)
            #expect(stored["pending"] == 2)
            let again = try solo.start()  // throws unless it answers ping again
            let after = try #require(try control.data("status"))
            #expect(after["pending"] == 2)
            #expect(try control.data("stop") != nil)
            #expect(again.wait(timeout: 10) == 0)

            let events = solo.events
            let types = events.compactMap { $0["type"]?.stringValue }
            #expect(types.filter { $0 == "process.started" }.count == 2)
            #expect(types.last == "process.stopped")
            let savedEvent = events.first { $0["type"] == "op.saved" }
            #expect(savedEvent?["key"]?.stringValue == key)
            #expect(savedEvent?["proc"] == "solo")
            #expect(events.contains { $0["type"] == "control.received" && $0["ok"] == false })
            #expect(events.contains { $0["type"] == "pass.end" && $0["outcome"] == "unreachable" })
        }
    }
}
