import Foundation
import SyncProtocol
import Testing

@Suite("Codec round trip")
struct CodecRoundTripTests {
    @Test("the samples cover every message type")
    func samplesCoverEveryType() {
        #expect(Set(Samples.withOptionals.map(\.type)) == Set(Message.allTypes))
        #expect(Message.allTypes.count == 14)
    }

    @Test("every message decodes to itself", arguments: Samples.all)
    func roundTrip(message: Message) throws {
        let frames = Codec.encode(message)
        #expect(frames.count == 2)
        #expect(String(decoding: frames[0], as: UTF8.self) == "SL1 \(message.type)")
        #expect(try Codec.decodeHeader(frames[0]) == message.type)
        #expect(try Codec.decode(frames) == message)
        // The body is one line of JSON, readable as it is.
        let body = String(decoding: frames[1], as: UTF8.self)
        #expect(!body.contains("\n"))
        #expect(try JSONSerialization.jsonObject(with: Data(frames[1])) is [String: Any])
        // Stable: encoding what was decoded gives the same message again.
        #expect(try Codec.decode(Codec.encode(Codec.decode(frames))) == message)
    }

    @Test("absent optional fields are left out of the body, and an explicit null reads as absent")
    func optionalsAbsent() throws {
        let reply = Codec.encode(.error(ErrorReply(code: .busy, message: "try later")))
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(reply[1])) as? [String: Any]).keys
        #expect(Set(keys) == ["code", "message"])

        let explicitNull = Message.frames("error", #"{"req":null,"code":"busy","message":"try later"}"#)
        #expect(try Codec.decode(explicitNull) == .error(ErrorReply(code: .busy, message: "try later")))
        let pull = Message.frames("pull", #"{"req":1,"cursor":5,"limit":10}"#)
        #expect(try Codec.decode(pull) == .pull(Pull(req: 1, cursor: 5, limit: 10)))
    }

    @Test("a hint on the wire is three keys of reference and nothing else")
    func hintIsAReference() throws {
        let frames = Codec.encode(.hint(Hint(hint: "h-1", account: "acme", head: 12)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(frames[1])) as? [String: Any])
        #expect(Set(object.keys) == ["hint", "account", "head"])
    }

    @Test("keys are sorted, so a message is the same bytes in every process")
    func deterministicBytes() throws {
        let frames = Codec.encode(.pull(Pull(req: 8, cursor: 40, limit: 200, account: "acme")))
        #expect(String(decoding: frames[1], as: UTF8.self) == #"{"account":"acme","cursor":40,"limit":200,"req":8}"#)
        let control = Message.control(Control(req: 1, command: "x", args: ["b": 1, "a": 2, "c": 3, "d": 4]))
        // Dictionary order differs from process to process; the bytes on the wire do not.
        #expect(String(decoding: Codec.encode(control)[1], as: UTF8.self).contains(#"{"a":2,"b":1,"c":3,"d":4}"#))
    }

    @Test("fields in any order, with whitespace, decode the same")
    func orderAndWhitespace() throws {
        let frames = Message.frames("hint", " {\n  \"head\" : 12 ,\t\"account\":\"acme\", \"hint\":\"h-1\"\r\n} ")
        #expect(try Codec.decode(frames) == .hint(Hint(hint: "h-1", account: "acme", head: 12)))
    }

    @Test("escaped keys and values read as what they spell")
    func escapes() throws {
        let frames = Message.frames("hint", #"{"\u0068int":"h-\u00e9\ud83c\udf0d","acc\u006Funt":"a\/b","head":3}"#)
        #expect(try Codec.decode(frames) == .hint(Hint(hint: "h-é🌍", account: "a/b", head: 3)))
        let unknown = Message.frames("hint", #"{"hint":"h","account":"a","head":3,"b\u006Fdy":"x"}"#)
        #expect(throws: ProtocolError.unknownField(type: "hint", field: "body")) { try Codec.decode(unknown) }
    }

    @Test("decodeOrReply hands back the message or the error to answer with")
    func decodeOrReply() throws {
        let good = Codec.encode(.registered(Registered(device: "pixel")))
        #expect(try Codec.decodeOrReply(good).get() == .registered(Registered(device: "pixel")))
        let bad = Message.frames("registered", #"{"device":""}"#)
        guard case .failure(let error) = Codec.decodeOrReply(bad) else {
            Issue.record("an empty device id was accepted")
            return
        }
        #expect(error.code == .invalid)
        #expect(error.description == #"registered: field "device" is empty"#)
    }
}
