import Foundation
import LabTestSupport
import SyncProtocol
import Testing

@testable import LabKit

@Suite("EventLog")
struct EventLogTests {
    /// This test's folder (each test has an instance of the suite of its own).
    let folder = TempFolder()
    var eventsFile: String { folder.file("events.jsonl") }

    @Test("one parsable JSON line per event, wall/sim/proc/type first, fields after in order")
    func oneLinePerEvent() throws {
        let path = eventsFile
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
        let path = eventsFile
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

    /// A pool's devices write into the pool's log: each line names its own process, one hold (the pool's turn)
    /// keeps every log's lines, one flush from any of them writes them all, and the file closes with the last log.
    @Test("logs sharing one file: own proc per line, one hold and one write for all, closed by the last to go")
    func sharedLogs() throws {
        let path = eventsFile
        func lines() throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        var pool: EventLog? = try EventLog(path: path, process: "pool-1", clock: SimClock(epochMicros: 0, scale: 1))
        let red = EventLog(sharing: pool!, process: "red-1")
        let blue = EventLog(sharing: pool!, process: "blue-2")
        pool?.hold()
        red.hold()
        red.emit("pass.start", [("pass", 1)])
        red.release()
        blue.emit("pass.start", [("pass", 7)])
        #expect(try lines().isEmpty, "held by the pool's turn")
        blue.flush()
        #expect(try lines().count == 2, "one device's flush writes every device's lines")
        red.emit("pass.end", [("pass", 1)])
        pool?.release()
        let all = try lines()
        #expect(all.count == 3)
        #expect(all[0].contains(#""proc":"red-1","type":"pass.start""#))
        #expect(all[1].contains(#""proc":"blue-2","type":"pass.start""#))
        #expect(all[2].contains(#""proc":"red-1","type":"pass.end""#))
        // The pool's log goes first; the devices' still write into the file.
        pool = nil
        blue.emit("process.stopped")
        #expect(try lines().count == 4)
    }

    @Test("events from several threads at once arrive as whole lines, none lost")
    func concurrentWriters() throws {
        let path = eventsFile
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

    @Test("sim is written as JSONValue writes the rounded Double: signs, whole seconds, dropped zeros, far-off values")
    func simMatchesJSONValue() {
        var samples: [Double] = [0, -0.0, 1, -1, 5, 10, 120, 999, 1000, 1001, 1010, 1100, -500, -1500, -2000, 1e11,
                                 -1e11, 1e12, 1e13, 123_456_789_012, 999_999_999_999, -999_999_999_999, .nan]
        var state: UInt64 = 0x5eed
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let magnitude = Double(state >> 24) / Double(1 << 40) * pow(10, Double(state % 13))
            samples.append(((state & 1 == 0 ? magnitude : -magnitude) * 1000).rounded() / 1000 * 1000)
        }
        for millis in samples.map({ $0.rounded() }) {
            var fast: [UInt8] = []
            EventLog.writeSim(millis, to: &fast)
            var general: [UInt8] = []
            JSONValue.double(millis / 1000).write(to: &general)
            #expect(fast == general, "\(millis)")
        }
    }

    @Test("integers are spelled as String(Int) spells them, at every length and both signs")
    func integersAtEveryLength() {
        var values = [0, 1, 9, 10, 99, 100, 101, 999, 1_000, Int.max, Int.min, Int.min + 1, 1_790_000_000_000_000]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, 2 * power - 1]
        }
        for value in values + values.filter({ $0 != Int.min }).map({ -$0 }) {
            var line = EventFields(capacity: 8)
            line.appendInteger(value)
            #expect(String(decoding: line.bytes(from: 0), as: UTF8.self) == String(value))
        }
    }

    @Test("lines are byte for byte what the String writer of JSONValue spells, through both emit paths")
    func linesMatchTheStringWriter() throws {
        let path = eventsFile
        let process = "dev \"é\"\n"
        let log = try EventLog(path: path, process: process, clock: SimClock(epochMicros: 0, scale: 1))
        var generator = EventGenerator(state: 0x5eed)
        var expected: [String] = []
        for index in 0..<3_000 {
            let fields = (0..<generator.next(below: 7)).map { _ in
                (EventGenerator.keys[generator.next(below: EventGenerator.keys.count)], generator.value(depth: 0))
            }
            let type = index % 3 == 0 ? "op.applied" : "hint.accepted"
            var text = ",\"proc\":"
            JSONValue.string(process).write(to: &text)
            text += ",\"type\":\"\(type)\""
            for (key, value) in fields {
                text += ",\"\(key)\":"
                value.write(to: &text)
            }
            expected.append(text + "}")
            if index % 2 == 0 {
                log.emit(type, fields)
            } else {
                let typed: StaticString = index % 3 == 0 ? "op.applied" : "hint.accepted"
                log.emit(typed) { line in
                    for (key, value) in fields { EventGenerator.add(key, value, to: &line) }
                }
            }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count)
        for (line, want) in zip(lines, expected) {
            let suffix = line[try #require(line.range(of: ",\"proc\":")).lowerBound...]
            #expect(suffix == want)
        }
    }
}

/// Random event fields for the byte-identity test: every JSONValue case, strings needing escapes, unicode.
private struct EventGenerator {
    var state: UInt64
    static let keys = ["hint", "device", "waitedSec", "seqs", "a_b-1", "head"]
    static let pieces = ["a", "Z", "0", " ", "/", "\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1f}", "\u{7f}", "é", "日本",
                         "🙂", "h-12", "android"]

    mutating func next(below bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }

    mutating func string() -> String {
        (0..<next(below: 30)).map { _ in Self.pieces[next(below: Self.pieces.count)] }.joined()
    }

    mutating func value(depth: Int) -> JSONValue {
        switch next(below: depth < 2 ? 9 : 7) {
        case 0: return .null
        case 1: return .bool(next(below: 2) == 0)
        case 2: return .int(next(below: 2) == 0 ? next(below: 1_000) : Int(bitPattern: UInt(state)))
        case 3: return .double(Double(next(below: 2_000_000) - 1_000_000) / 1_000)
        case 4:
            let samples: [Double] = [0, -0.0, 0.1, 1e-7, 1e15, 1e16, -2.5e20, 123.456_789, .nan, .infinity, 1 / 3]
            return .double(samples[next(below: samples.count)])
        case 5, 6: return .string(string())
        case 7: return .array((0..<next(below: 4)).map { _ in value(depth: depth + 1) })
        default: return .object((0..<next(below: 4)).map { _ in (string(), value(depth: depth + 1)) })
        }
    }

    /// Adds `value` under `key` with the typed overload its case calls for.
    static func add(_ key: String, _ value: JSONValue, to line: inout EventFields) {
        let staticKey: StaticString
        switch key {
        case "hint": staticKey = "hint"
        case "device": staticKey = "device"
        case "waitedSec": staticKey = "waitedSec"
        case "seqs": staticKey = "seqs"
        case "a_b-1": staticKey = "a_b-1"
        default: staticKey = "head"
        }
        switch value {
        case .string(let v): line.add(staticKey, v)
        case .int(let v): line.add(staticKey, v)
        case .bool(let v): line.add(staticKey, v)
        case .double(let v): line.add(staticKey, v)
        default: line.add(staticKey, value)
        }
    }
}
