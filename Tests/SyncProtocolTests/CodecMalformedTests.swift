import SyncProtocol
import Testing

/// One kind of bad input and the exact refusal it must get.
struct Malformed: Sendable, CustomTestStringConvertible {
    let kind: String
    let frames: [[UInt8]]
    let expected: ProtocolError
    let code: ErrorCode

    init(_ kind: String, _ frames: [[UInt8]], _ expected: ProtocolError, _ code: ErrorCode) {
        self.kind = kind
        self.frames = frames
        self.expected = expected
        self.code = code
    }

    var testDescription: String { kind }
}

private func frames(_ type: String, _ json: String) -> [[UInt8]] { Message.frames(type, json) }
/// A push of one op whose JSON fields are `fields`.
private func pushOp(_ fields: String) -> [[UInt8]] { frames("push", #"{"req":1,"ops":[{"# + fields + "}]}") }
/// A push of one op asking for a page: `cursor` and `limit` as JSON, or left out when nil.
private func pushPage(cursor: String?, limit: String?) -> [[UInt8]] {
    let page = [cursor.map { #""cursor":\#($0),"# }, limit.map { #""limit":\#($0),"# }].compactMap { $0 }.joined()
    return frames("push", #"{"req":1,"# + page + #""ops":[{"key":"k","draft":"d","action":"create","base":0}]}"#)
}
private let hintBody = #"{"hint":"h-1","account":"acme","head":3}"#
private let validHint = frames("hint", hintBody)
private func ops(_ count: Int) -> String {
    (0..<count).map { #"{"key":"k\#($0)","draft":"d","action":"create","base":0}"# }.joined(separator: ",")
}

/// Kinds of bad input that each have one exact `ProtocolError`.
private let exactCases: [Malformed] = [
    Malformed("no frames", [], .empty, .badFrame),
    Malformed("a header without its body", [Array("SL1 hint".utf8)], .missingBody(type: "hint"), .badFrame),
    Malformed("three frames", validHint + [Array("extra".utf8)], .tooManyFrames(count: 3), .badFrame),
    Malformed("a header too long", [Array(repeating: UInt8(ascii: "S"), count: Limits.maxHeaderBytes + 1), []],
              .headerTooLong(bytes: Limits.maxHeaderBytes + 1), .badFrame),
    Malformed("a header without a version", frames("x", "{}").replacingHeader("hint"),
              .badHeader("hint"), .badFrame),
    Malformed("a header without a space", frames("x", "{}").replacingHeader("SL1hint"),
              .badHeader("SL1hint"), .badFrame),
    Malformed("a header with two spaces", frames("x", "{}").replacingHeader("SL1  hint"),
              .badHeader("SL1  hint"), .badFrame),
    Malformed("a signed version", frames("x", "{}").replacingHeader("SL+1 hint"),
              .badHeader("SL+1 hint"), .badFrame),
    Malformed("a zero-padded version", frames("x", "{}").replacingHeader("SL01 hint"),
              .badHeader("SL01 hint"), .badFrame),
    Malformed("a header that is not UTF-8", [[0x53, 0x4C, 0x31, 0x20, 0xFF], []],
              .badHeader("SL1 \u{FFFD}"), .badFrame),
    Malformed("version 2", frames("x", hintBody).replacingHeader("SL2 hint"),
              .unsupportedVersion(2), .unsupportedVersion),
    Malformed("version 0", frames("x", hintBody).replacingHeader("SL0 hint"),
              .unsupportedVersion(0), .unsupportedVersion),
    Malformed("an unknown type", frames("gossip", "{}"), .unknownType("gossip"), .unknownType),
    Malformed("a type in the wrong case", frames("Hint", hintBody), .unknownType("Hint"), .unknownType),
    Malformed("an oversized body", [Array("SL1 hint".utf8), Array(repeating: 0x20, count: Limits.maxBodyBytes + 1)],
              .oversized(bytes: Limits.maxBodyBytes + 1, limit: Limits.maxBodyBytes), .tooLarge),
    Malformed("a body that is not UTF-8",
              [Array("SL1 hint".utf8), Array(#"{"hint":""#.utf8) + [0xC3, 0x28, 0x22, 0x7D]],
              .notUTF8(type: "hint"), .malformed),
    Malformed("a JSON array", frames("hint", "[1,2,3]"), .notAnObject(type: "hint"), .malformed),
    Malformed("a JSON string", frames("hint", #""hint""#), .notAnObject(type: "hint"), .malformed),
    Malformed("JSON null", frames("hint", "null"), .notAnObject(type: "hint"), .malformed),
    Malformed("a missing field", frames("hint", #"{"hint":"h-1","account":"acme"}"#),
              .missingField(type: "hint", field: "head"), .malformed),
    Malformed("a missing nested field", pushOp(#""draft":"d","action":"create","base":0"#),
              .missingField(type: "push", field: "ops[0].key"), .malformed),
    Malformed("a string where an integer belongs", frames("hint", #"{"hint":"h-1","account":"acme","head":"3"}"#),
              .wrongType(type: "hint", field: "head", expected: "an integer"), .malformed),
    Malformed("an integer where a string belongs", frames("hint", #"{"hint":7,"account":"acme","head":3}"#),
              .wrongType(type: "hint", field: "hint", expected: "a string"), .malformed),
    Malformed("an object where an array belongs", frames("push", #"{"req":1,"ops":{}}"#),
              .wrongType(type: "push", field: "ops", expected: "an array"), .malformed),
    Malformed("a number where an object belongs", frames("push", #"{"req":1,"ops":[1]}"#),
              .wrongType(type: "push", field: "ops[0]", expected: "an object"), .malformed),
    Malformed("a nested wrong type", pushOp(#""key":"k","draft":"d","action":"create","base":"0""#),
              .wrongType(type: "push", field: "ops[0].base", expected: "an integer"), .malformed),
    Malformed("a null required field", frames("hint", #"{"hint":"h-1","account":null,"head":3}"#),
              .wrongType(type: "hint", field: "account", expected: "a string, not null"), .malformed),
    Malformed("a hint carrying a draft's body",
              frames("hint", #"{"hint":"h-1","account":"acme","head":3,"body":"secret"}"#),
              .unknownField(type: "hint", field: "body"), .malformed),
    Malformed("a notice's change carrying a title", frames("notice",
              #"{"account":"acme","head":1,"origin":"p","changes":[{"seq":1,"draft":"d","version":1,"title":"t"}]}"#),
              .unknownField(type: "notice", field: "changes[0].title"), .malformed),
    Malformed("an op carrying an unknown field",
              pushOp(#""key":"k","draft":"d","action":"create","base":0,"colour":"red""#),
              .unknownField(type: "push", field: "ops[0].colour"), .malformed),
    Malformed("a negative cursor", frames("pull", #"{"req":1,"cursor":-1,"limit":10}"#),
              .invalidValue(type: "pull", field: "cursor", reason: "is negative"), .invalid),
    Malformed("a page limit of 0", frames("pull", #"{"req":1,"cursor":0,"limit":0}"#),
              .invalidValue(type: "pull", field: "limit", reason: "must be 1...\(Limits.maxPageLimit), got 0"),
              .invalid),
    Malformed("a page limit over the maximum", frames("pull", #"{"req":1,"cursor":0,"limit":1001}"#),
              .invalidValue(type: "pull", field: "limit", reason: "must be 1...\(Limits.maxPageLimit), got 1001"),
              .invalid),
    Malformed("a push without ops", frames("push", #"{"req":1,"ops":[]}"#),
              .invalidValue(type: "push", field: "ops", reason: "is empty"), .invalid),
    Malformed("a push with too many ops", frames("push", #"{"req":1,"ops":[\#(ops(Limits.maxOpsPerPush + 1))]}"#),
              .invalidValue(type: "push", field: "ops", reason: "has 501 ops, limit \(Limits.maxOpsPerPush)"),
              .invalid),
    Malformed("a push asking for a page from a negative cursor", pushPage(cursor: "-1", limit: "10"),
              .invalidValue(type: "push", field: "cursor", reason: "is negative"), .invalid),
    Malformed("a push asking for a page of 0", pushPage(cursor: "0", limit: "0"),
              .invalidValue(type: "push", field: "limit", reason: "must be 1...\(Limits.maxPageLimit), got 0"),
              .invalid),
    Malformed("a push asking for a page without its size", pushPage(cursor: "3", limit: nil),
              .invalidValue(type: "push", field: "limit", reason: "is missing (cursor asks for a page)"), .invalid),
    Malformed("a push giving a page size without a cursor", pushPage(cursor: nil, limit: "5"),
              .invalidValue(type: "push", field: "cursor", reason: "is missing (limit asks for a page from it)"),
              .invalid),
    Malformed("a push's result whose page answers another request", frames("pushResult",
              #"{"req":4,"results":[],"page":{"req":5,"changes":[],"next":0,"head":0}}"#),
              .invalidValue(type: "pushResult", field: "page.req", reason: "is 5, not the push's 4"), .invalid),
    Malformed("a push's result whose page has a negative head", frames("pushResult",
              #"{"req":4,"results":[],"page":{"req":4,"changes":[],"next":0,"head":-1}}"#),
              .invalidValue(type: "page", field: "head", reason: "is negative"), .invalid),
    Malformed("a change in a push's page carrying an unknown field", frames("pushResult",
              #"{"req":4,"results":[],"page":{"req":4,"changes":[{"seq":1,"colour":"red"}],"next":1,"head":1}}"#),
              .unknownField(type: "pushResult", field: "page.changes[0].colour"), .malformed),
    Malformed("an empty id", frames("hello", #"{"device":"pixel","account":"acme","token":"","platform":"ios"}"#),
              .invalidValue(type: "hello", field: "token", reason: "is empty"), .invalid),
    Malformed("an id too long", frames("register",
              #"{"device":"\#(String(repeating: "d", count: 129))","account":"a","platform":"web","token":"t"}"#),
              .invalidValue(type: "register", field: "device", reason: "is longer than 128 bytes"), .invalid),
    Malformed("an empty op key", pushOp(#""key":"","draft":"d","action":"create","base":0"#),
              .invalidValue(type: "push", field: "ops[0].key", reason: "is empty"), .invalid),
    Malformed("a negative base version", pushOp(#""key":"k","draft":"d","action":"update","base":-2"#),
              .invalidValue(type: "push", field: "ops[0].base", reason: "is negative"), .invalid),
    Malformed("a negative head in a hint", frames("hint", #"{"hint":"h-1","account":"acme","head":-3}"#),
              .invalidValue(type: "hint", field: "head", reason: "is negative"), .invalid),
    Malformed("an empty hint id", frames("hint", #"{"hint":"","account":"acme","head":3}"#),
              .invalidValue(type: "hint", field: "hint", reason: "is empty"), .invalid),
]

/// Kinds of bad input whose refusal carries a detail from the JSON parser: checked by case, type and field.
private let patternCases: [(kind: String, frames: [[UInt8]], matches: @Sendable (ProtocolError) -> Bool)] = [
    ("not JSON", frames("hint", "{hint: h-1}"), {
        if case .malformedJSON(type: "hint", _) = $0 { true } else { false }
    }),
    ("an empty body", frames("hint", ""), {
        if case .malformedJSON(type: "hint", _) = $0 { true } else { false }
    }),
    ("JSON cut short", frames("hint", String(hintBody.dropLast(3))), {
        if case .malformedJSON(type: "hint", _) = $0 { true } else { false }
    }),
    ("trailing garbage", frames("hint", hintBody + " x"), {
        if case .malformedJSON(type: "hint", _) = $0 { true } else { false }
    }),
    ("a fraction where an integer belongs", frames("hint", #"{"hint":"h-1","account":"acme","head":1.5}"#), {
        if case .malformedJSON(type: "hint", let detail) = $0 { detail.contains("number") } else { false }
    }),
    ("an integer out of range", frames("pull", #"{"req":1,"cursor":99999999999999999999999,"limit":1}"#), {
        if case .malformedJSON(type: "pull", let detail) = $0 { detail.contains("number") } else { false }
    }),
    ("nesting deeper than the limit", frames("control",
        #"{"req":1,"command":"x","args":{"a":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        + "}}"), {
        guard case .malformedJSON(type: "control", let detail) = $0 else { return false }
        return detail.contains("\(Limits.maxDepth) levels")
    }),
    ("a trailing comma in an object", frames("hint", #"{"hint":"h-1","account":"acme","head":3,}"#), {
        if case .malformedJSON(type: "hint", let detail) = $0 { detail.contains("expected a key") } else { false }
    }),
    ("a trailing comma in an array", frames("notice", #"{"account":"a","head":1,"origin":"o","changes":[ ,]}"#), {
        if case .malformedJSON(type: "notice", _) = $0 { true } else { false }
    }),
    ("a key twice", frames("hint", #"{"hint":"h-1","account":"acme","head":3,"head":4}"#), {
        guard case .malformedJSON(type: "hint", let detail) = $0 else { return false }
        return detail.contains(#""head" appears twice"#)
    }),
    ("a key twice in free-form args", frames("control", #"{"req":1,"command":"x","args":{"a":1,"b":{"c":1,"c":2}}}"#), {
        if case .malformedJSON(type: "control", let detail) = $0 { detail.contains(#""args.b.c""#) } else { false }
    }),
    ("a number with a leading zero", frames("hint", #"{"hint":"h-1","account":"acme","head":03}"#), {
        if case .malformedJSON(type: "hint", _) = $0 { true } else { false }
    }),
    ("an unknown escape", frames("hint", #"{"hint":"h\x","account":"acme","head":3}"#), {
        if case .malformedJSON(type: "hint", let detail) = $0 { detail.contains("escape") } else { false }
    }),
    ("a raw control character in a string", frames("hint", "{\"hint\":\"h\u{1}\",\"account\":\"a\",\"head\":3}"), {
        if case .malformedJSON(type: "hint", let detail) = $0 { detail.contains("0x01") } else { false }
    }),
    ("two objects", frames("hint", hintBody + hintBody), {
        if case .malformedJSON(type: "hint", let detail) = $0 { detail.contains("the end of the body") } else { false }
    }),
    ("an unknown platform", frames("hello", #"{"device":"d","account":"a","token":"t","platform":"symbian"}"#), {
        guard case .invalidValue(type: "hello", field: "platform", let reason) = $0 else { return false }
        return reason.contains("symbian")
    }),
    ("an unknown op action", pushOp(#""key":"k","draft":"d","action":"explode","base":0"#), {
        if case .invalidValue(type: "push", field: "ops[0].action", _) = $0 { true } else { false }
    }),
    ("an unknown outcome", frames("pushResult", #"{"req":1,"results":[{"key":"k","outcome":"maybe"}]}"#), {
        if case .invalidValue(type: "pushResult", field: "results[0].outcome", _) = $0 { true } else { false }
    }),
    ("an unknown error code", frames("error", #"{"code":"oops","message":"m"}"#), {
        if case .invalidValue(type: "error", field: "code", _) = $0 { true } else { false }
    }),
]

@Suite("Codec refuses malformed input")
struct CodecMalformedTests {
    @Test("each kind of bad input gets its own exact error", arguments: exactCases)
    func exactRefusal(_ input: Malformed) {
        #expect(throws: input.expected) { try Codec.decode(input.frames) }
        #expect(input.expected.code == input.code)
        // The description is what goes back in the error reply: it names the problem in words.
        #expect(!input.expected.description.isEmpty)
    }

    @Test("refusals carrying a parser's detail are of the right kind")
    func patternRefusals() {
        for input in patternCases {
            do {
                let message = try Codec.decode(input.frames)
                Issue.record("\(input.kind): decoded \(message)")
            } catch {
                #expect(input.matches(error), "\(input.kind): got \(error)")
            }
        }
    }

    @Test("at least fifteen distinct kinds of malformed input are covered")
    func enoughKinds() {
        let kinds = Set(exactCases.map(\.kind) + patternCases.map(\.kind))
        #expect(kinds.count == exactCases.count + patternCases.count)
        #expect(kinds.count >= 15)
        // Every refusal code a decoder can produce is exercised.
        let codes = Set(exactCases.map(\.code))
        #expect(codes == [.badFrame, .unsupportedVersion, .unknownType, .tooLarge, .malformed, .invalid])
    }

    @Test("descriptions say what was wrong and where")
    func descriptions() {
        #expect(ProtocolError.unknownField(type: "hint", field: "body").description == #"hint: unknown field "body""#)
        #expect(ProtocolError.unsupportedVersion(2).description.contains("speaks 1"))
        #expect(ProtocolError.badHeader("HTTP/1.1").description.contains(#""SL1 <type>""#))
        #expect(ProtocolError.oversized(bytes: 2_000_000, limit: Limits.maxBodyBytes).description
            == "body is 2000000 bytes, limit \(Limits.maxBodyBytes)")
        #expect(ProtocolError.unexpected(type: "hint", receiver: "server").code == .unexpected)
    }
}

extension Array where Element == [UInt8] {
    /// The same frames with another header.
    func replacingHeader(_ header: String) -> [[UInt8]] {
        [[UInt8](header.utf8)] + dropFirst()
    }
}
