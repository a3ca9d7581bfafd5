import Foundation
import LabKit
import Testing

@Suite("EventLog")
struct EventLogTests {
    private func temporaryFile() throws -> String {
        let folder = NSTemporaryDirectory() + "eventlog-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/events.jsonl"
    }

    @Test("one parsable JSON line per event, wall/sim/proc/type first, fields after in order")
    func oneLinePerEvent() throws {
        let path = try temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let clock = SimClock(epochMicros: SimClock.wallMicros() - 2_000_000, scale: 3_600)
        let log = try EventLog(path: path, process: "pixel", clock: clock)
        log.emit("process.started", [("role", "device"), ("pid", 1_234)])
        log.emit("hint.received", [("hint", "h-1"), ("head", 12), ("keys", .array(["account", "head", "hint"]))])
        log.emit("net.offline")

        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix(#"{"wall":"#))
        #expect(lines[0].contains(#","proc":"pixel","type":"process.started","role":"device","pid":1234}"#))
        #expect(lines[2].hasSuffix(#","proc":"pixel","type":"net.offline"}"#))
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let wall = try #require(object["wall"] as? Int64)
            let sim = try #require(object["sim"] as? Double)
            // Two real seconds after the epoch at one simulated hour a second: about two hours in.
            #expect(sim >= 7_200)
            #expect(abs(clock.sim(atWall: wall) - sim) < 0.001)
            #expect(object["proc"] as? String == "pixel")
        }
    }

    @Test("held events wait in memory until a flush or the last release, then arrive whole and in order")
    func heldEventsAreWrittenAtFlushAndRelease() throws {
        let path = try temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let log = try EventLog(path: path, process: "server", clock: SimClock(epochMicros: 0, scale: 1))
        func lines() throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        log.hold()
        log.emit("op.applied", [("seq", 1)])
        log.hold()
        log.emit("op.applied", [("seq", 2)])
        #expect(try lines().isEmpty)
        log.flush()
        #expect(try lines().count == 2)
        log.emit("notice.sent", [("head", 2)])
        log.release()
        #expect(try lines().count == 2, "still held by the outer hold")
        log.release()
        let all = try lines()
        #expect(all.count == 3)
        #expect(all[0].contains("\"seq\":1") && all[1].contains("\"seq\":2") && all[2].contains("notice.sent"))
        log.emit("process.stopped")
        #expect(try lines().count == 4, "not held: written at once")
    }

    @Test("events from several threads at once arrive as whole lines, none lost")
    func concurrentWriters() throws {
        let path = try temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let log = try EventLog(path: path, process: "server", clock: .startingNow(scale: 1))
        let threads = 4, perThread = 500
        let padding = String(repeating: "é\"\\\n", count: 300)  // long, escaped lines make torn writes visible
        let done = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            Thread {
                for index in 0..<perThread {
                    log.emit("op.applied", [
                        ("thread", .int(thread)), ("index", .int(index)), ("pad", .string(padding)),
                    ])
                }
                done.signal()
            }.start()
        }
        for _ in 0..<threads { #expect(done.wait(timeout: .now() + 30) == .success) }

        let data = try #require(FileManager.default.contents(atPath: path))
        let lines = data.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == threads * perThread)
        var seen = Set<[Int]>()
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(object["type"] as? String == "op.applied")
            #expect(object["pad"] as? String == padding)
            seen.insert([try #require(object["thread"] as? Int), try #require(object["index"] as? Int)])
        }
        #expect(seen.count == threads * perThread)
    }

    @Test("a log that cannot be opened is an error naming the file")
    func unopenable() {
        let path = "/nonexistent-\(UUID().uuidString)/events.jsonl"
        do {
            _ = try EventLog(path: path, process: "x", clock: .startingNow(scale: 1))
            Issue.record("opened \(path)")
        } catch {
            #expect("\(error)".contains(path))
        }
    }
}
