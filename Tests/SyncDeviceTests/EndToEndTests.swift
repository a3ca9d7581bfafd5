import Foundation
import LabKit
import LabTestSupport
import SQLite
import SyncProtocol
import Testing
import ZeroMQ

/// Real server, broker and devices over real sockets (issue 5's end-to-end tests), from the executables built beside
/// this test bundle.
@Suite(.serialized)
struct EndToEndTests {
    static let hintKeys = JSONValue.array(["account", "head", "hint"])

    /// A server, a broker (with `brokerArguments`), Android device a in the foreground and iOS device b in the
    /// background with no engagement (no refresh windows, so only a hint or an open can wake it); once b is
    /// registered with the broker.
    static func awakeAAndSleepingB(brokerArguments: [String] = [],
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> LabProcesses {
        let lab = try LabProcesses(scale: 60, devices: [("a", .android), ("b", .ios)])
        try lab.startBroker(brokerArguments)
        try lab.startServer()
        try lab.startDevice("a", ["--start-state", "foreground"])
        try lab.startDevice("b", ["--start-state", "background", "--engagement", "0"])
        #expect(try lab.wait(limit: 10) { try lab.status("b")?["broker"] == "registered" },
                sourceLocation: sourceLocation)
        return lab
    }

    @Test func anEditOnOneDeviceReachesTheOtherThroughAHint() async throws {
        try await onOwnThread {
            let lab = try Self.awakeAAndSleepingB()

            let saved = try lab.control("a").data("edit", ["draft": "shopping", "action": "create", "title": "Shopping",
                                                            "body": "milk"])
            let key = try #require(saved?["key"]?.stringValue)
            #expect(try lab.wait(limit: 20) { try lab.status("b")?["cursor"] == 1 })

            let events = readEvents(lab.events("b"))
            let applied = events.first { $0["type"] == "change.applied" && $0["key"]?.stringValue == key }
            #expect(applied?["trigger"] == "push")
            #expect(applied?["origin"] == "a")
            let hints = events.filter { $0["type"] == "hint.received" }
            #expect(!hints.isEmpty)
            #expect(hints.allSatisfy { $0["keys"] == Self.hintKeys })
            #expect(try lab.replica("b") == ["shopping|Shopping|milk|1"])
            #expect(try lab.replica("b") == lab.serverDrafts())
            #expect(try lab.status("a")?["ops"]?["completed"] == 1)
        }
    }

    @Test func whenTheHintIsLostTheForegroundOpenPullsTheEdit() async throws {
        try await onOwnThread {
            let lab = try Self.awakeAAndSleepingB(brokerArguments: ["--loss", "1"])

            let saved = try lab.control("a").data("edit", ["draft": "ideas", "action": "create", "title": "Ideas",
                                                            "body": "a sync lab"])
            let key = try #require(saved?["key"]?.stringValue)
            // The broker loses the hint for b (and says so); b hears nothing and stays behind.
            #expect(lab.wait(limit: 20) {
                readEvents(lab.events("broker")).contains { $0["type"] == "hint.dropped" && $0["device"] == "b" }
            })
            #expect(try lab.status("b")?["cursor"] == 0)
            #expect(readEvents(lab.events("b")).filter { $0["type"] == "hint.received" }.isEmpty)

            // The user opens the app: the foreground pass pulls from the durable cursor.
            #expect(try lab.control("b").data("open") != nil)
            #expect(try lab.wait(limit: 20) { try lab.status("b")?["cursor"] == 1 })
            let applied = readEvents(lab.events("b")).first {
                $0["type"] == "change.applied" && $0["key"]?.stringValue == key
            }
            #expect(applied?["trigger"] == "foreground")
            #expect(try lab.replica("b") == ["ideas|Ideas|a sync lab|1"])
        }
    }

    @Test func sigkillMidPassTwentyTimesLosesNothingAndAppliesEveryOpOnce() async throws {
        try await onOwnThread {
            let lab = try LabProcesses(scale: 60, devices: [("k", .android)])
            // Replies take 25 ms, pushes carry 5 ops: the device is always mid-pass with work left when it is killed.
            try lab.startServer(["--reply-delay-ms", "25"])
            let extra = ["--start-state", "foreground", "--batch", "5", "--reply-timeout-ms", "1000",
                         "--lease-sec", "15", "--synchronous", "normal"]
            try lab.startDevice("k", broker: false, extra)
            let control = lab.control("k")
            #expect(try control.data("offline") != nil)
            var keys: [String] = []
            for index in 0..<500 {
                let draft = "d\(index % 25)"
                let action = index < 25 ? "create" : "update"
                let saved = try control.data("edit", ["draft": .string(draft), "action": .string(action),
                                                      "title": .string("t\(index)"), "body": .string("edit \(index)")])
                keys.append(try #require(saved?["key"]?.stringValue))
            }
            #expect(try lab.status("k")?["pending"] == 500)

            var generator = SeededGenerator(seed: 20)
            var kills = 0
            var checkedCursors: [Int] = []
            var pendingAtKill: [Int] = []
            let sent = EventCounter(path: lab.events("k"), type: "op.sent")
            for round in 0..<20 {
                let sentBefore = sent.update()
                if round == 0 {
                    #expect(try control.data("online") != nil)
                } else {
                    try lab.restart("k")  // starts in the foreground: a foreground pass resumes the work
                }
                // Kill once this run has sent a batch (mid-pass), a random 0–80 ms later.
                #expect(lab.wait(limit: 10) { sent.update() > sentBefore }, "round \(round) sent nothing")
                usleep(UInt32(generator.unit() * 80_000))
                lab.kill9("k")
                kills += 1
                let ledger = try Database(path: lab.dbPath("k"), synchronous: .normal)
                pendingAtKill.append(try ledger.scalarInt(
                    "SELECT count(*) FROM ops WHERE status NOT IN ('completed', 'needsAttention')") ?? 0)

                // After every kill the stored cursor is never ahead of what the replica applied: the server's state
                // at that cursor is exactly the device's copy of it.
                let device = try Database(path: lab.dbPath("k"), synchronous: .normal)
                let cursor = try device.scalarInt("SELECT value FROM state WHERE key = 'cursor'") ?? 0
                var expected: [String: String] = [:]
                for change in try lab.serverChanges() where change.seq <= cursor {
                    expected[change.draft] = "\(change.title ?? "")|\(change.body ?? "")|\(change.version)"
                }
                var shadow: [String: String] = [:]
                try device.forEach("SELECT id, coalesce(title, ''), coalesce(body, ''), version FROM shadow", []) {
                    shadow[$0.string(0)] = "\($0.string(1))|\($0.string(2))|\($0.int(3))"
                }
                #expect(shadow == expected, "after kill \(kills), cursor \(cursor)")
                if let last = checkedCursors.last { #expect(cursor >= last) }
                checkedCursors.append(cursor)
            }
            #expect(kills == 20)
            #expect(pendingAtKill.allSatisfy { $0 > 0 }, "pending at each kill: \(pendingAtKill)")

            // Restart once more and drain: every op settles, the cursor reaches the head.
            try lab.restart("k")
            let drained = try lab.wait(limit: 60) {
                guard let status = try control.data("sync", ["force": true], timeoutMs: 10_000) else { return false }
                let head = try lab.serverChanges().count
                return status["pending"] == 0 && status["cursor"]?.intValue == head
            }
            #expect(drained)

            let changes = try lab.serverChanges()
            var applications: [String: Int] = [:]
            for change in changes { applications[change.key, default: 0] += 1 }
            #expect(changes.count == 500)
            #expect(Set(applications.keys) == Set(keys))
            #expect(applications.values.allSatisfy { $0 == 1 })
            #expect(try lab.status("k")?["ops"]?["completed"] == 500)
            #expect(try lab.replica("k") == lab.serverDrafts())

            // Over the whole file (every restart), the cursor never went back and never passed an unapplied change.
            var applied: Set<Int> = []
            var last = 0
            var moves = 0
            for event in readEvents(lab.events("k")) {
                if event["type"] == "change.applied", let seq = event["seq"]?.intValue { applied.insert(seq) }
                if event["type"] == "cursor.moved", let from = event["from"]?.intValue, let to = event["to"]?.intValue {
                    moves += 1
                    #expect(from >= last && to > from)
                    #expect((from + 1...to).allSatisfy { applied.contains($0) })
                    last = to
                }
            }
            #expect(moves > 0)
            let restarts = readEvents(lab.events("k")).filter { $0["type"] == "process.started" }.count
            #expect(restarts == 21)
        }
    }
}
