import Foundation
import LabTestSupport
import SyncProtocol
import Testing
@testable import Launcher

/// Outside devices end to end (docs/DEVICE-CONTRACT.md): the shipped topologies of topologies/outside/ run with the
/// Python programs of examples/python-device/ (pyzmq with CURVE, sqlite3) behind the lab side `synclab-device
/// program`. The reference device passes three topologies, the broken one fails the check LESSONS.md predicts, and
/// a hostile one ends the run at once with a named error and nothing left running.
@Suite(.serialized) struct OutsideDeviceTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/python-device").standardized.path

    /// python3 with pyzmq (scripts/deps.sh installs it with pip, as for PROTOCOL.md's snippets).
    static let pyzmq: Bool = {
        (try? ChildProcess.run("/usr/bin/env", ["python3", "-c", "import zmq, sqlite3; assert zmq.has('curve')"]))?
            .status == 0
    }()

    /// A shipped topology of topologies/outside/, its programs' paths made absolute (a test's working directory is
    /// not the package's), with `edit` applied to its text.
    static func run(_ name: String, extra: [String] = [], edit: (String) -> String = { $0 }) throws
        -> EndToEndTests.Run
    {
        let path = EndToEndTests.topologies.appendingPathComponent("outside/\(name).json5")
        let text = try String(contentsOf: path, encoding: .utf8)
            .replacingOccurrences(of: "\"examples/python-device/", with: "\"\(examples)/")
        let home = TempFolder()
        let file = home.file("\(name).json5")
        try edit(text).write(toFile: file, atomically: true, encoding: .utf8)
        return try EndToEndTests.run(file: file, in: home, extra: extra, limit: 90)
    }

    static func events(_ run: EndToEndTests.Run) -> [JSONValue] {
        run.home.text("run/events.jsonl").split(separator: "\n").compactMap {
            try? JSONValue.parse(String($0))
        }
    }

    @Test(.enabled(if: pyzmq, "python3 with pyzmq (CURVE) is not installed: outside devices not run"))
    func theQuickstartPassesWithThreePythonDevices() throws {
        let run = try Self.run("quickstart")
        defer { EndToEndTests.expectNoneLeft(run) }
        run.expectPassed()
        #expect(run.report["ops"]?["saved"]?.intValue == 4)
        #expect(run.report["ops"]?["applied"]?.intValue == 4)
        #expect(run.report["propagation"]?["count"]?.intValue == 8)
        let events = Self.events(run)
        // The programs ran, and the edits were saved by them (their op.saved, through the lab side).
        let started = events.filter { $0["type"]?.stringValue == "program.started" }
        #expect(Set(started.compactMap { $0["proc"]?.stringValue }) == ["pixel", "iphone", "laptop"])
        #expect(started.allSatisfy { $0["argv"]?.arrayValue?.contains(.string("\(Self.examples)/device.py")) == true })
        #expect(events.filter { $0["type"]?.stringValue == "op.saved" }.count == 4)
        #expect(!events.contains { $0["type"]?.stringValue == "program.failed" })
        // The report says plainly what does not apply to them.
        let notes = run.report["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.hasPrefix("outside devices (program): pixel, iphone, laptop;")
            && $0.contains("data-age-at-open do not apply") }, "\(notes)")
    }

    @Test(.enabled(if: pyzmq, "python3 with pyzmq (CURVE) is not installed: outside devices not run"))
    func halfTheHintsLostAndThePythonDevicesStillConverge() throws {
        let run = try Self.run("hint-loss")
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        #expect((run.report["hints"]?["dropped"]?.intValue ?? 0) > 0)
        #expect(run.invariant("convergence").held)
        #expect(run.report["ops"]?["saved"]?.intValue == run.report["ops"]?["applied"]?.intValue)
    }

    @Test(.enabled(if: pyzmq, "python3 with pyzmq (CURVE) is not installed: outside devices not run"))
    func killMinus9WithEditsInFlightLosesNothingAndAppliesNothingTwice() throws {
        let run = try Self.run("crash")
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        let events = Self.events(run)
        func of(_ type: String) -> [JSONValue] { events.filter { $0["type"]?.stringValue == type } }
        // The edit sent to a paused server before a1 was killed: sent again after the restart with its own key, and
        // applied exactly once.
        let saved = try #require(of("op.saved").first { $0["draft"]?.stringValue == "in-flight-3" })
        let key = try #require(saved["key"]?.stringValue)
        let killed = try #require(of("process.killed").first { $0["target"]?.stringValue == "a1" })
        let sends = of("op.sent").filter { $0["key"]?.stringValue == key }
        #expect(sends.contains { ($0["wall"]?.intValue ?? 0) < (killed["wall"]?.intValue ?? 0) }, "not in flight")
        #expect(sends.contains { ($0["wall"]?.intValue ?? 0) > (killed["wall"]?.intValue ?? 0) }, "never resent")
        #expect(of("op.applied").filter { $0["key"]?.stringValue == key }.count == 1)
        #expect(run.invariant("exactly-once").held && run.invariant("no-lost-edit").held)
        #expect(run.invariant("cursor-safety").detail.contains("after restarts"))
        // The platform's execution limit (account "window"): `slow` ends its push pass at `expire`, cut off, within
        // the grace; `stubborn` ignores it, is killed after the grace and started again; neither breaks the contract.
        func by(_ proc: String, _ type: String) -> [JSONValue] { of(type).filter { $0["proc"]?.stringValue == proc } }
        #expect(!by("slow", "program.expire").isEmpty)
        #expect(by("slow", "pass.end").contains { $0["cutOff"] == true && $0["outcome"] == "cutOff" })
        #expect(by("slow", "program.killed").isEmpty, "slow answered expire in time: \(by("slow", "program.killed"))")
        let kills = by("stubborn", "program.killed")
        #expect(!kills.isEmpty && kills.allSatisfy { $0["reason"]?.stringValue?.contains("after expire") == true })
        #expect(by("stubborn", "pass.end").contains { $0["cutOff"] == true && $0["outcome"] == "killed" })
        #expect(by("stubborn", "program.started").count == kills.count + 1, "each kill is followed by a start")
        #expect(of("program.failed").isEmpty)
        let notes = run.report["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.hasPrefix("outside device \"stubborn\": its program was killed \(kills.count) time")
            && $0.contains("after expire") }, "\(notes)")
        #expect(!notes.contains { $0.hasPrefix("outside device \"slow\": its program was killed") }, "\(notes)")
        // Every line, the new program.expire and program.killed among them, as the catalogue has it.
        let problems = EventConformance.problems(in: run.home.text("run/events.jsonl"))
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test(.enabled(if: pyzmq, "python3 with pyzmq (CURVE) is not installed: outside devices not run"))
    func aKeyPerResendFailsExactlyOnceAsTheLessonPredicts() throws {
        let run = try Self.run("new-key")
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "the expectation was not met: \(run.output)")
        let failed = (run.report["invariants"]?.arrayValue ?? []).filter { $0["held"]?.boolValue != true }
        #expect(failed.compactMap { $0["name"]?.stringValue } == ["exactly-once"], "\(run.failedInvariants)")
        let detail = run.invariant("exactly-once").detail
        #expect(detail.contains("new-key") && detail.contains("~2"), "\(detail)")
        #expect(!detail.contains("same-key"), "\(detail)")
        // Judged as if nothing were expected, the same folder fails.
        let check = try EndToEndTests.synclab(["check", "--ignore-expect", run.folder], limit: 60)
        #expect(check.status == 1, "\(check.output)")
    }

    @Test func theSimulationRefusesAnOutsideDeviceRatherThanJudgeItsOwnInstead() throws {
        let path = EndToEndTests.topologies.appendingPathComponent("outside/quickstart.json5").path
        let (status, output) = try EndToEndTests.synclab(["sim", path], limit: 30)
        #expect(status == 2, "\(output)")
        #expect(output.contains("device \"pixel\" is an outside device (program); the simulation cannot run a program"))
    }

    @Test(.enabled(if: pyzmq, "python3 with pyzmq (CURVE) is not installed: outside devices not run"),
          arguments: [
              ("garbage", "of its output is not a JSON object: \"<html>this is not a JSON line</html>\""),
              ("crash-on-start", "the program exited with status 7 before it said ready"),
              ("never-ready", "it did not say ready within 2000 ms"),
              ("bad-event", "op.saved lacks its field \"key\""),
          ])
    func aHostileProgramEndsTheRunWithANamedError(_ mode: String, _ words: String) throws {
        let run = try Self.run("hostile") {
            $0.replacingOccurrences(of: "\"--misbehave\", \"garbage\"", with: "\"--misbehave\", \"\(mode)\"")
                .replacingOccurrences(
                    of: "{ at: \"2m\", action: \"open\", device: \"bad\" }",
                    with: "{ at: \"2m\", action: \"edit\", device: \"bad\", draft: \"d2\", op: \"create\" }")
        }
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("the run stopped: outside device \"bad\": its program broke the device contract: "),
                "\(run.output)")
        #expect(run.output.contains(words), "\(run.output)")
        let failed = Self.events(run).filter { $0["type"]?.stringValue == "program.failed" }
        #expect(failed.count == 1 && failed.first?["proc"]?.stringValue == "bad", "\(failed)")
        #expect(failed.first?["reason"]?.stringValue?.contains(words) == true)
        // The report says it too, for what ran.
        #expect(run.home.text("run/report.md").contains("its program broke the device contract"))
        #expect(run.report["notes"]?.arrayValue?.contains { $0.stringValue?.contains(words) == true } == true)
    }
}
