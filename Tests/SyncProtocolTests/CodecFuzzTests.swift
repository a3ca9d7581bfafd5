import SyncProtocol
import Testing

/// Seeded random input never crashes the decoder: each case decodes (and then re-encodes to the same message) or is
/// refused with a `ProtocolError` (the only error `Codec.decode` can throw, by its type).
@Suite("Codec fuzzing")
struct CodecFuzzTests {
    /// Decodes `cases` inputs made by `make` from a generator seeded with `seed`: each one that decodes must survive
    /// its own round trip and give the same keys read either way, each one refused must say why. How many were decoded
    /// and refused.
    private func fuzz(seed: UInt64, cases: Int, _ make: (Int, inout SplitMix64) -> [[UInt8]])
        -> (decoded: Int, refused: Int)
    {
        var random = SplitMix64(seed: seed)
        var tally = (decoded: 0, refused: 0)
        for index in 0..<cases {
            let frames = make(index, &random)
            do {
                let message = try Codec.decode(frames)
                tally.decoded += 1
                #expect(try Codec.decode(Codec.encode(message)) == message, "case \(index) of seed \(seed)")
                // A decoded body's keys may be read without checking it again (`WireKeys.topLevel(ofChecked:)`).
                #expect(WireKeys.topLevel(ofChecked: frames[1]) == WireKeys.topLevel(frames[1]),
                        "case \(index) of seed \(seed)")
            } catch {
                tally.refused += 1
                #expect(!error.description.isEmpty, "case \(index) of seed \(seed)")
            }
        }
        return tally
    }

    /// Bytes that JSON is made of, so random bodies get past the first character now and then.
    private static let jsonish = Array(#"{}[]":,-.0123456789eE truefalsnul\acehiknrsty"#.utf8) + [0x00, 0xC3, 0xFF]

    @Test("random frames of random bytes")
    func randomBytes() {
        let tally = fuzz(seed: 0x5EED_0001, cases: 4_000) { _, random in
            let frameCount = random.below(5)
            return (0..<frameCount).map { _ in random.bytes(random.below(48)) }
        }
        #expect(tally.refused == 4_000)
    }

    @Test("valid headers with random JSON-ish bodies")
    func randomBodies() {
        let tally = fuzz(seed: 0x5EED_0002, cases: 4_000) { _, random in
            let type = Message.allTypes[random.below(Message.allTypes.count)]
            let length = random.below(64)
            var body = (0..<length).map { _ in Self.jsonish[random.below(Self.jsonish.count)] }
            if random.below(2) == 0 { body = Array("{".utf8) + body + Array("}".utf8) }
            return [Array("SL1 \(type)".utf8), body]
        }
        #expect(tally.refused > 0)
    }

    @Test("random mutations of valid messages")
    func mutations() {
        let originals = Samples.all.map(Codec.encode)
        let tally = fuzz(seed: 0x5EED_0003, cases: 6_000) { round, random in
            var frames = originals[round % originals.count]
            // Most mutations hit the body; some the header or the frame count.
            let target = random.below(10) == 0 ? 0 : 1
            var bytes = frames[target]
            for _ in 0...random.below(3) {
                mutate(&bytes, &random)
            }
            frames[target] = bytes
            switch random.below(20) {
            case 0: frames.append(random.bytes(random.below(8)))
            case 1: frames.removeLast()
            default: break
            }
            return frames
        }
        // Both paths ran: some mutations (a digit changed, a space added) leave a valid message.
        #expect(tally.decoded > 0)
        #expect(tally.refused > 0)
        #expect(tally.decoded + tally.refused == 6_000)
    }

    private func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        let position = bytes.isEmpty ? 0 : random.below(bytes.count)
        switch random.below(9) {
        case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1) << UInt8(random.below(8))
        case 1: bytes.insert(random.byte(), at: position)
        case 2 where !bytes.isEmpty: bytes.remove(at: position)
        case 3: bytes = Array(bytes.prefix(position))
        case 4 where !bytes.isEmpty:
            let end = min(bytes.count, position + random.below(16) + 1)
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 5 where !bytes.isEmpty: bytes[position] = Self.jsonish[random.below(Self.jsonish.count)]
        case 6 where !bytes.isEmpty:
            // A digit for a digit: often still a valid message.
            if let digit = bytes.indices.filter({ (0x30...0x39).contains(bytes[$0]) }).randomElement(using: &random) {
                bytes[digit] = 0x30 + UInt8(random.below(10))
            }
        case 7: bytes.insert(contentsOf: Array(#","x":1"#.utf8), at: position)
        default: bytes.insert(0x20, at: position)
        }
    }

    @Test("deep and wide nesting in free-form args is refused or decoded, never a stack overflow")
    func nesting() {
        let tally = fuzz(seed: 0x5EED_0004, cases: 300) { _, random in
            let depth = random.below(2_000)
            let open = random.below(2) == 0 ? "[" : "{\"k\":"
            let close = open == "[" ? "]" : "}"
            let nested = String(repeating: open, count: depth) + "0" + String(repeating: close, count: depth)
            let body = #"{"req":1,"command":"x","args":{"deep":"# + nested + "}}"
            return [Array("SL1 control".utf8), Array(body.utf8)]
        }
        #expect(tally.decoded > 0)
        #expect(tally.refused > 0)
    }
}
