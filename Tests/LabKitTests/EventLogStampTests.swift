import SyncProtocol
import Testing

@testable import LabKit

/// What the hot event lines reuse: a line's stamp kept from the previous line of the same millisecond, fragments
/// rendered once, hint ids written from their number. Each must spell what the String writer spells, byte for byte
/// (old run folders and the report read these lines).
@Suite("EventLog stamps and fragments")
struct EventLogStampTests {
    /// `{"wall":<wall>,"sim":<sim>` as the String writer spells it.
    static func written(wall: Int, simMillis: Double) -> String {
        var text = "{\"wall\":"
        JSONValue.int(wall).write(to: &text)
        text += ",\"sim\":"
        JSONValue.double(simMillis / 1000).write(to: &text)
        return text
    }

    @Test("a stamp is the String writer's, whether its millisecond and sim are new or kept from the line before")
    func stampsMatchTheStringWriter() {
        let epoch = 1_796_354_129_600_000
        var stamps: [(Int, Double)] = [
            (epoch, 0), (epoch + 1, 0), (epoch + 999, 0), (epoch + 1000, 1), (epoch + 1000, 1), (epoch + 1001, 1),
            (epoch + 1010, -1), (epoch + 1100, 1e11), (epoch + 2000, .nan), (epoch + 2001, .infinity),
            (epoch + 2002, 1e13), (epoch + 2003, 2), (999_999, 5), (1_000_000, 5), (1_000_001, 5), (1_000_999, 6),
            (9_999_999_999, 7), (10_000_000_000, 7), (10_000_000_001, 8), (0, 0), (5, 0), (-5_000_000, 3),
            (Int.max, 9), (Int.max - 1, 9), (epoch, -0.0), (epoch + 3, 1500), (epoch + 4, -1500), (epoch + 5, 1500),
        ]
        var state: UInt64 = 0x5eed
        var wall = epoch
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            wall += Int(state >> 60) * Int((state >> 40) % 400)
            stamps.append((wall, Double((wall - epoch) / 1000 + Int(state % 3))))
        }
        var line = EventFields(capacity: 16)
        for (wall, simMillis) in stamps {
            let start = line.count
            line.appendStamp(wall: wall, simMillis: simMillis)
            let text = String(decoding: line.bytes(from: start), as: UTF8.self)
            #expect(text == Self.written(wall: wall, simMillis: simMillis), "wall \(wall), sim \(simMillis)")
        }
    }

    @Test("a fragment and a prefixed number are what the field-by-field writer spells")
    func fragmentsMatchTheStringWriter() {
        let values = ["p3", "", "dev \"é\"\n", "日本🙂", "\\", "\u{01}\u{7f}", String(repeating: "x", count: 40)]
        for value in values {
            var line = EventFields(capacity: 4)
            line.add(EventFragment([("device", .string(value))]))
            var expected = ",\"device\":"
            JSONValue.string(value).write(to: &expected)
            #expect(String(decoding: line.bytes(from: 0), as: UTF8.self) == expected)
        }
        let fields: [(String, JSONValue)] = [("origin", .string("o \"1\"")), ("seqs", .array([.int(1), .int(-2)])),
                                             ("k\n", .object([("a", .double(0.5))])), ("n", .null)]
        var line = EventFields(capacity: 4)
        line.add(EventFragment(fields))
        var expected = ""
        for (key, value) in fields {
            expected += ","
            JSONValue.string(key).write(to: &expected)
            expected += ":"
            value.write(to: &expected)
        }
        #expect(String(decoding: line.bytes(from: 0), as: UTF8.self) == expected)
        for head in [0, 7, -3, Int.max, Int.min] {
            var line = EventFields(capacity: 4)
            line.add(EventFragment([("device", .string("p\"1"))], then: "head"), head)
            #expect(String(decoding: line.bytes(from: 0), as: UTF8.self) == ",\"device\":\"p\\\"1\",\"head\":\(head)")
        }
        for number in [0, 1, 9, 10, 12_345, Int.max, -1, Int.min] {
            var line = EventFields(capacity: 4)
            line.add("hint", prefix: "h-", number)
            #expect(String(decoding: line.bytes(from: 0), as: UTF8.self) == ",\"hint\":\"h-\(number)\"")
        }
    }

    @Test("an event type's quoted name is its name as a JSON string")
    func quotedNames() {
        for type in EventCatalogue.all {
            var expected: [UInt8] = []
            JSONValue.writeString(type.name, to: &expected)
            #expect(type.quoted.bytes == expected, "\(type.name)")
        }
    }
}
