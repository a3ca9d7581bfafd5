import Foundation
import Testing

@testable import SyncProtocol

/// The hand-written body writer and reader are speed only: the writer must give JSONEncoder's bytes, and the reader
/// must never accept a body the strict path (JSONChecker + JSONDecoder) would refuse or read differently.
@Suite("Codec fast path")
struct CodecFastPathTests {
    @Test("the writer gives JSONEncoder's bytes for every sample", arguments: Samples.all)
    func writerMatchesFoundation(message: Message) throws {
        #expect(Codec.body(of: message) == Codec.foundationBody(of: message))
    }

    @Test("writeBody into one reused buffer gives body(of:) for every sample, in any order")
    func writeBodyReusesOneBuffer() {
        var buffer: [UInt8] = Array(repeating: 0x7B, count: 300)
        for message in Samples.all + Samples.all.reversed() {
            Codec.writeBody(of: message, into: &buffer)
            #expect(buffer == Codec.body(of: message))
        }
    }

    @Test("hint bodies written into a reused buffer are JSONEncoder's bytes: every head length, ids that need escaping")
    func hintBodiesIntoReusedBuffer() {
        var buffer: [UInt8] = []
        var heads = [0, 1, 9, 10, -1, -10, Int.max, Int.min]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            heads += [power - 1, power]
        }
        let ids = [("a", "h-1"), ("bench", "h-123456789"), ("acc/é日", "h-🙂"), ("q\"uote", "h-1"), ("a", "back\\"),
                   ("tab\t", "h-2"), ("", ""), (String(repeating: "long", count: 40), "h-77")]
        for head in heads {
            for (account, id) in ids {
                let message = Message.hint(Hint(hint: id, account: account, head: head))
                Codec.writeBody(of: message, into: &buffer)
                #expect(buffer == Codec.foundationBody(of: message))
            }
        }
    }

    @Test("every character that needs escaping, and some that do not, are written as JSONEncoder writes them")
    func escapes() {
        var text = ""
        for value in 0..<0x80 { text.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        text += "é🌍\u{2028}\u{2029}\u{FEFF}/\\\""
        let messages: [Message] = [
            .error(ErrorReply(req: Int.min, code: .invalid, message: text)),
            .hint(Hint(hint: text, account: "", head: Int.max)),
            .push(Push(req: -1, ops: [Op(key: text, draft: "d", action: .create, base: 0, title: "", body: text)])),
        ]
        for message in messages {
            #expect(Codec.body(of: message) == Codec.foundationBody(of: message))
            #expect(BodyReader.decode(type: message.type, body: Codec.body(of: message)) == message)
        }
    }

    @Test("the reader reads every sample as the strict path does", arguments: Samples.all)
    func readerMatchesStrict(message: Message) throws {
        let body = Codec.body(of: message)
        let strict = try Codec.strictDecode(type: message.type, body: body)
        #expect(strict == message)
        #expect(BodyReader.decode(type: message.type, body: body) == strict)
    }

    @Test("odd but valid bodies: the reader agrees with the strict path or leaves them to it")
    func oddBodies() {
        let bodies: [(String, String)] = [
            ("hint", " {\n \"head\" : 12 ,\t\"account\":\"acme\", \"hint\":\"h-1\"\r\n} "),
            ("hint", #"{"hint":"h-\u00e9\ud83c\udf0d","account":"a\/b","head":3}"#),
            ("hint", #"{"hint":"h","account":"a","head":-0}"#),
            ("hint", #"{"hint":"h","account":"a","head":1.0}"#),
            ("hint", #"{"hint":"h","account":"a","head":1e2}"#),
            ("hint", #"{"hint":"h","account":"a","head":9223372036854775808}"#),
            ("hint", #"{"hint":"h","account":"a","head":3,"head":4}"#),
            ("hint", #"{"hint":"h","account":"a"}"#),
            ("hint", #"{"hint":"\ud83c","account":"a","head":3}"#),
            ("hint", #"{"hint":"h","account":"a","head":3,}"#),
            ("hint", #"{"hint":"h","account":"a","head":03}"#),
            ("error", #"{"req":null,"code":"busy","message":"x"}"#),
            ("error", #"{"req":null,"req":2,"code":"busy","message":"x"}"#),
            ("error", #"{"code":"nope","message":"x"}"#),
            ("pull", #"{"req":1,"cursor":5,"limit":10,"account":null}"#),
            ("push", #"{"req":1,"ops":[{"key":"k","draft":"d","action":"create","base":0,"title":null}]}"#),
            ("push", #"{"req":1,"ops":[{"key":"k","draft":"d","action":"create","base":0,"colour":1}]}"#),
            ("deviceState", #"{"device":"x","online":true,"app":"foreground","doze":false,"refreshOff":1}"#),
            ("notice", #"{"account":"a","head":1,"origin":"o","changes":[{"seq":1,"draft":"d","version":1}]}"#),
            ("control", #"{"req":1.0,"command":"edit","args":{"b":[1,2.5,null],"a":{"x":"é"}}}"#),
            ("control", #"{"req":1,"command":"ping","args":{}}"#),
            ("control", #"{"req":1,"command":"ping"}"#),
            ("control", #"{"req":1,"command":"ping","args":[]}"#),
            ("control", #"{"req":1.5,"command":"ping","args":{}}"#),
            ("control", #"{"req":1,"command":"ping","args":{},"extra":1}"#),
            ("control", #"{"req":1,"command":"ping","args":{"a":1,"a":2}}"#),
            ("control", #"{"req":1,"command":"","args":{}}"#),
            ("controlAck", #"{"req":2,"ok":true,"detail":"","data":null}"#),
            ("controlAck", #"{"req":2,"ok":true,"detail":"d","data":{"n":1e2,"m":-0.0}}"#),
            ("controlAck", #"{"req":2,"ok":1,"detail":"d"}"#),
            ("controlAck", #"{"req":2,"ok":true}"#),
            ("controlAck", #"{"req":2,"ok":true,"detail":"d","data":3,"data":4}"#),
        ]
        for (type, json) in bodies {
            let body = Array(json.utf8)
            let strict = Result { () throws(ProtocolError)
                -> Message in try Codec.strictDecode(type: type, body: body) }
            guard let fast = BodyReader.decode(type: type, body: body) else { continue }
            #expect((try? strict.get()) == fast, "\(json)")
        }
    }

    @Test("mutated bodies: whatever the reader accepts, the strict path accepts as the same message")
    func mutatedBodies() {
        var random = SplitMix64(seed: 0xFA57_0001)
        let alphabet = Array(#"{}[]":,-.0123456789eE nul\u"#.utf8) + [0x00, 0x1F, 0xC3, 0xFF]
        var accepted = 0
        for _ in 0..<6_000 {
            let message = Samples.all[random.below(Samples.all.count)]
            var body = Codec.body(of: message)
            for _ in 0...random.below(3) where !body.isEmpty {
                let at = random.below(body.count)
                switch random.below(3) {
                case 0: body[at] = alphabet[random.below(alphabet.count)]
                case 1: body.remove(at: at)
                default: body.insert(alphabet[random.below(alphabet.count)], at: at)
                }
            }
            guard let fast = BodyReader.decode(type: message.type, body: body) else { continue }
            accepted += 1
            let strict = try? Codec.strictDecode(type: message.type, body: body)
            #expect(strict == fast, "\(String(decoding: body, as: UTF8.self))")
        }
        // Some mutations (a changed digit or letter) leave valid bodies: the comparison above did run.
        #expect(accepted > 0)
    }

    @Test("UTF-8 is judged as String(validating:) judges it: truncated, overlong, surrogate and stray bytes included")
    func utf8ValidationMatchesStandardLibrary() {
        var generator = SplitMix64(seed: 0x75_7466_38)
        // Pieces that make well-formed and ill-formed text when strung together in any order.
        let pieces: [[UInt8]] = [
            Array("ab".utf8), Array("é".utf8), Array("世".utf8), Array("🌍".utf8), Array("\u{FFFD}".utf8), [0],
            [0x80], [0xC3], [0xE4, 0xB8], [0xF0, 0x9F, 0x8C], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80,
                0x80],
            [0xFF], [0xFE],
        ]
        var rejected = 0
        for _ in 0..<5_000 {
            var bytes: [UInt8] = []
            for _ in 0..<generator.below(6) { bytes += pieces[generator.below(pieces.count)] }
            let expected = String(validating: bytes, as: UTF8.self)
            let actual = bytes.withUnsafeBufferPointer { String(utf8Validating: $0) }
            #expect(actual == expected, "\(bytes)")
            if expected == nil { rejected += 1 }
        }
        #expect(rejected > 0)
    }

    @Test("the eight-byte test never calls a word plain that holds a quote, backslash, control or non-ASCII byte")
    func eightByteTest() {
        var generator = SplitMix64(seed: 0x5741_52)
        let plain = Array(" !#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~".utf8)
        for _ in 0..<2_000 {
            var bytes = (0..<8).map { _ in plain[generator.below(plain.count)] }
            #expect(!JSONBytes.mayNeedAttention(bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }))
            // Every byte value in every position: the answer is true exactly when the byte needs attention.
            let position = generator.below(8)
            for value in 0...255 {
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let special = value < 0x20 || value >= 0x80 || value == 0x22 || value == 0x5C
                #expect(JSONBytes.mayNeedAttention(word) == special, "\(bytes)")
            }
            bytes[position] = plain[0]
        }
    }
}
