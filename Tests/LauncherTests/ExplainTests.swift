import Foundation
import SyncProtocol
import Testing

@testable import Launcher

/// `synclab explain`'s stories from hand-made events.
struct ExplainTests {
    static var events: [Event] { TimelineModelTests.events(TimelineModelTests.edit) }

    /// The story `synclab explain key` tells of the hand-made events, once `key` is found to name `subject`.
    private func story(_ key: String, names subject: Explain.Subject) -> [Explain.Line] {
        let explain = Explain(events: Self.events)
        #expect(explain.subject(of: key) == subject)
        return explain.story(subject)
    }

    @Test func anOpKeyIsToldFromItsSaveToTheOtherDevice() {
        let lines = story("k1", names: .op("k1")).map(\.rendered)
        #expect(lines.first == "10s       a saved op k1 (create draft d1)")
        #expect(lines.contains("12s       server applied it as seq 1 of account acme"))
        #expect(lines.contains("13s       broker accepted hint h-1 for b (head 1)"))
        #expect(lines.contains("14s       broker delivered hint h-1 to b"))
        #expect(lines.contains("15s       b received hint h-1 (head 1)"))
        #expect(lines.last == "17s       b applied it (seq 1) in pass 1, a pass by push")
        // Nothing of k2's story.
        #expect(!lines.contains { $0.contains("h-2") })
    }

    @Test func aDeadHintIsToldWithItsReason() {
        let lines = story("h-2", names: .hint("h-2")).map(\.text)
        #expect(lines.count == 2)
        #expect(lines.last == "broker dropped it: loss: the hint died here")
        let op = story("k2", names: .op("k2")).map(\.text)
        #expect(op.contains { $0.hasPrefix("broker dropped hint h-2 for b: loss") })
    }

    @Test func aDraftMergesTheStoriesOfItsOpsAndAnUnknownKeyNamesNothing() {
        let lines = story("d1", names: .draft("d1")).map(\.text)
        #expect(lines.first == "draft d1: 2 op(s) saved on it: k1, k2")
        #expect(lines.contains("server applied k2 as seq 2 of account acme"))
        #expect(Explain(events: Self.events).subject(of: "nothing-here") == nil)
    }

    @Test func aHintHeldByAKilledBrokerDiesWithItInTheStory() {
        var rows = TimelineModelTests.edit
        rows.removeAll { $0.2 == "hint.dropped" }
        rows.insert((24, "launcher", "process.killed", #""target":"broker""#), at: rows.count - 3)
        rows.insert((26, "broker", "process.started", #""role":"broker""#), at: rows.count - 3)
        let lines = Explain(events: TimelineModelTests.events(rows)).story(.op("k2")).map(\.rendered)
        #expect(lines.contains { $0.hasPrefix("24s") && $0.contains("the broker was killed holding hint h-2 for b") })
        let k1 = Explain(events: TimelineModelTests.events(rows)).story(.op("k1")).map(\.text)
        #expect(!k1.contains { $0.contains("killed") })
    }

    @Test func anOpNeverAppliedSaysSo() {
        var rows = TimelineModelTests.edit
        rows.append((50, "a", "op.saved", #""key":"k3","draft":"d9","action":"create""#))
        rows.append((51, "a", "op.result", #""key":"k3","outcome":"unknown","reason":"no reply in 300 ms""#))
        let lines = Explain(events: TimelineModelTests.events(rows)).story(.op("k3")).map(\.text)
        #expect(lines.contains { $0.contains("outcome unknown: no reply in 300 ms") })
        #expect(lines.last == "by the end of the events the server had not applied k3")
    }
}

/// The line `synclab run` prints as each scenario step plays.
struct StepLineTests {
    @Test func aStepIsEchoedWithItsSimulatedTimeActionAndTarget() {
        let kill = ScenarioStep(at: 600, action: .signal(target: "server", command: "kill"), line: 3)
        #expect(LabRun.stepLine(kill, [("action", "kill"), ("target", "server")]) == "10m00s kill server")
        let edit = ScenarioStep(
            at: 18_000,
            action: .edit(
                device: "iphone", draft: "d1", action: .create,
                title: nil, body: nil), line: 4)
        #expect(
            LabRun.stepLine(edit, [("target", "iphone"), ("draft", "d1"), ("op", "create")])
                == "5h00m edit iphone d1 (create)")
    }
}
