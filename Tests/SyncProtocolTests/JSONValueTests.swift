import Foundation
import SyncProtocol
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    static let sample: JSONValue = .object([
        ("name", "Grüße, 世界 🌍"),
        ("escapes", "quote \" backslash \\ slash / newline \n tab \t return \r bell \u{7} nul \u{0} esc \u{1B}"),
        ("int", 42), ("negative", -7), ("big", .int(Int.max)), ("double", 0.125), ("tiny", 1e-7), ("huge", 3.5e300),
        ("yes", true), ("no", false), ("nothing", .null),
        ("list", .array([1, "two", .array([]), .object([])])),
        ("nested", .object([("z", 1), ("a", .object([("deeper", .array([.null, false]))]))])),
    ])

    @Test("what write produces, parse reads back as the same value")
    func writeParseRoundTrip() throws {
        let text = Self.sample.description
        #expect(!text.contains("\n"))
        #expect(try JSONValue.parse(text) == Self.sample)
        // Foundation's own parser agrees the text is JSON.
        #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
    }

    @Test("Codable encoding and decoding round trip too")
    func codableRoundTrip() throws {
        let data = try JSONEncoder().encode(Self.sample)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == Self.sample)
    }

    @Test("strings are escaped as JSON requires")
    func escaping() throws {
        let value = JSONValue.string("a\"b\\c\nd\te\r\u{1}\u{1F}/é😀")
        #expect(value.description == #""a\"b\\c\nd\te\r\u0001\u001f/é😀""#)
        #expect(try JSONValue.parse(value.description) == value)
        for scalar in (0..<0x20).compactMap(Unicode.Scalar.init) {
            let text = JSONValue.string(String(Character(scalar))).description
            #expect(try JSONValue.parse(text) == .string(String(Character(scalar))), "U+\(scalar.value)")
        }
    }

    @Test("objects keep the order they were given when written")
    func writtenOrder() {
        let value = JSONValue.object([("wall", 1), ("sim", 2), ("proc", "p"), ("type", "t")])
        #expect(value.description == #"{"wall":1,"sim":2,"proc":"p","type":"t"}"#)
    }

    @Test("objects are equal with their keys in any order, as JSON means")
    func objectEqualityIgnoresOrder() throws {
        let a = JSONValue.object([("b", 1), ("a", .array([1, 2]))])
        let b = JSONValue.object([("a", .array([1, 2])), ("b", 1)])
        #expect(a == b)
        #expect(a != .object([("a", .array([2, 1])), ("b", 1)]))
        #expect(a != .object([("a", .array([1, 2]))]))
        #expect(a != .object([("a", .array([1, 2])), ("c", 1)]))
    }

    @Test("numbers: integral doubles equal integers; NaN and infinity become null")
    func numbers() throws {
        #expect(JSONValue.double(2) == .int(2))
        #expect(JSONValue.double(2.5) != .int(2))
        #expect(JSONValue.double(2).description == "2")
        #expect(JSONValue.double(.nan).description == "null")
        #expect(JSONValue.double(.infinity).description == "null")
        // JSONEncoder refuses NaN; a JSONValue encodes it as null instead of failing.
        let encoded = try JSONEncoder().encode(JSONValue.array([.double(.nan), .double(-.infinity), 1.5]))
        #expect(String(decoding: encoded, as: UTF8.self) == "[null,null,1.5]")
        let ack = Codec.encode(.controlAck(ControlAck(req: 1, ok: true, data: .object([("ratio", .double(.nan))]))))
        #expect(try Codec.decode(ack) == .controlAck(ControlAck(req: 1, ok: true, data: .object([("ratio", .null)]))))
    }

    @Test("accessors read the value they name and nil otherwise")
    func accessors() {
        #expect(Self.sample["int"]?.intValue == 42)
        #expect(Self.sample["double"]?.doubleValue == 0.125)
        #expect(Self.sample["double"]?.intValue == nil)
        #expect(Self.sample["name"]?.stringValue == "Grüße, 世界 🌍")
        #expect(Self.sample["yes"]?.boolValue == true)
        #expect(Self.sample["list"]?.arrayValue?.count == 4)
        #expect(Self.sample["nested"]?["z"] == 1)
        #expect(Self.sample["missing"] == nil)
        #expect(Self.sample["int"]?.stringValue == nil)
        #expect(JSONValue.int(3)["key"] == nil)
    }

    @Test("parse accepts all of JSON's grammar")
    func parseAccepts() throws {
        let texts = [
            "0", "-0", "12", "-3.25", "1e5", "1E+5", "2.5e-3", "true", "false", "null", #""""#,
            #""\" \\ \/ \b \f \n \r \t \u00e9 \ud83c\udf0d""#, "[]", "{}", " [ 1 , [ ] , { } ] ",
            #"{"a":{"b":[{"c":null}]},"d":"é"}"#, "\t\r\n[1]\n",
        ]
        for text in texts {
            #expect((try? JSONValue.parse(text)) != nil, "\(text.debugDescription)")
        }
        #expect(try JSONValue.parse(#""\u00e9\ud83c\udf0d\n""#) == .string("é🌍\n"))
    }

    @Test("parse refuses text that is not exactly JSON")
    func parseRefuses() {
        let texts = [
            "", " ", "{", "[1,]", "{\"a\":1,}", "{,}", "[,1]", "{\"a\"}", "{\"a\":}", "{'a':1}", "{a:1}", "nul",
            "tru", "1 2", "01", "1.", ".5", "+1", "1e", "-", "NaN", "Infinity", "\"\\x\"", "\"\\u12\"", "\"open",
            "\"tab\tinside\"", "[1] x", "// comment\n1", "{\"a\":1,\"a\":2}",
            String(repeating: "[", count: Limits.maxDepth + 1) + String(repeating: "]", count: Limits.maxDepth + 1),
        ]
        for text in texts {
            #expect(throws: (any Error).self, "\(text.debugDescription)") { try JSONValue.parse(text) }
        }
        let deepest = String(repeating: "[", count: Limits.maxDepth) + String(repeating: "]", count: Limits.maxDepth)
        #expect((try? JSONValue.parse(deepest)) != nil)
    }
}

@Suite("WireKeys")
struct WireKeysTests {
    @Test("the top-level keys of a body, in wire order, nested ones and string contents aside")
    func topLevelKeys() {
        func keys(_ text: String) -> [String]? { WireKeys.topLevel(Array(text.utf8)) }
        #expect(keys(#"{"hint":"h-1","account":"acme","head":42}"#) == ["hint", "account", "head"])
        #expect(keys(#" { "a" : {"b": [1, {"c": 2}]}, "d": "e,\"f\":g", "h": [] } "#) == ["a", "d", "h"])
        #expect(keys("{}") == [])
        // An escaped key is read as JSON means it.
        #expect(keys(#"{"ti\u0074le":"x","x\"y":1}"#) == ["title", "x\"y"])
        // Not one valid JSON object: nil.
        #expect(keys(#"{"a":1,}"#) == nil)
        #expect(keys("[1,2]") == nil)
        #expect(keys(#"{"a":1} x"#) == nil)
        #expect(keys("") == nil)
    }
}
