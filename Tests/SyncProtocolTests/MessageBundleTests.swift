import SyncProtocol
import Testing

/// `MessageBundle` (docs/PROTOCOL.md §15): entries come back as they went in, bundles split at the byte limit
/// without cutting an entry, and every malformed bundle is refused with the entry at fault named.
@Suite struct MessageBundleTests {
    static func entry(_ device: String, _ body: String) -> MessageBundle.Entry {
        MessageBundle.Entry(device: Array(device.utf8), header: MessageBundle.pullHeader, body: Array(body.utf8))
    }

    /// The headers a bundle's entries are checked against are the codec's own (the broker now sends hints with
    /// `hintHeader`, which it used to take from the codec).
    @Test func entryHeadersAreTheCodecs() throws {
        #expect(MessageBundle.pullHeader == Codec.encode(.pull(Pull(req: 1, cursor: 0, limit: 1)))[0])
        #expect(MessageBundle.hintHeader == Codec.encode(.hint(Hint(hint: "h-0", account: "a", head: 0)))[0])
        let refused = MessageBundle.Failure.notAllowed(entry: 2, only: MessageBundle.pullHeader)
        #expect(refused.description == "entry 2: a bundle carries pulls only")
    }

    @Test func entriesRoundTripInOrder() throws {
        let entries = (0..<50).map { Self.entry("device-\($0)", #"{"req":\#($0),"cursor":7}"#) }
        let bundles = MessageBundle.encode(entries, maxBytes: 1 << 20)
        #expect(bundles.count == 1 && bundles[0].entries == 50)
        #expect(try MessageBundle.decode(bundles[0].frame, maxEntries: 50) == entries)
        #expect(MessageBundle.isBundle([[], MessageBundle.header, bundles[0].frame]))
        #expect(!MessageBundle.isBundle([Array("d".utf8), MessageBundle.header, bundles[0].frame]))
        #expect(!MessageBundle.isBundle([[], MessageBundle.pullHeader, bundles[0].frame]))
    }

    /// Split at `maxBytes` between entries, never inside one; one entry larger than the limit goes alone.
    @Test func bundlesSplitBetweenEntries() throws {
        let entries = (0..<10).map { Self.entry("d\($0)", String(repeating: "x", count: 100)) }
        let size = 12 + 2 + MessageBundle.pullHeader.count + 100
        let bundles = MessageBundle.encode(entries, maxBytes: 3 * size + 1)
        #expect(bundles.map(\.entries) == [3, 3, 3, 1])
        #expect(bundles.allSatisfy { $0.frame.count <= 3 * size + 1 })
        let again = try bundles.flatMap { try MessageBundle.decode($0.frame, maxEntries: 3) }
        #expect(again == entries)
        let big = [Self.entry("a", "1"), Self.entry("b", String(repeating: "y", count: 500)), Self.entry("c", "2")]
        #expect(MessageBundle.encode(big, maxBytes: 100).map(\.entries) == [1, 1, 1])
    }

    @Test func malformedBundlesAreRefusedNamingTheEntry() throws {
        let frame = MessageBundle.encode([Self.entry("pixel", "{}"), Self.entry("iphone", "{}")],
                                         maxBytes: 1 << 20)[0].frame
        #expect(throws: MessageBundle.Failure.empty) { try MessageBundle.decode([], maxEntries: 5) }
        #expect(throws: MessageBundle.Failure.tooManyEntries(limit: 1)) {
            try MessageBundle.decode(frame, maxEntries: 1)
        }
        // Every cut inside the second entry names it, a cut inside the first the first (a cut between the two leaves
        // a bundle of one).
        let firstSize = 12 + 5 + MessageBundle.pullHeader.count + 2
        for cut in 1..<frame.count where cut != firstSize {
            let entry = cut < firstSize ? 0 : 1
            #expect(throws: MessageBundle.Failure.truncated(entry: entry)) {
                try MessageBundle.decode(Array(frame.prefix(cut)), maxEntries: 5)
            }
        }
        let noDevice = MessageBundle.encode([Self.entry("", "{}")], maxBytes: 1 << 20)[0].frame
        #expect(throws: MessageBundle.Failure.badDevice(entry: 0)) { try MessageBundle.decode(noDevice, maxEntries: 5) }
        let long = MessageBundle.encode([Self.entry(String(repeating: "d", count: Limits.maxIDBytes + 1), "{}")],
                                        maxBytes: 1 << 20)[0].frame
        #expect(throws: MessageBundle.Failure.badDevice(entry: 0)) { try MessageBundle.decode(long, maxEntries: 5) }
        var noHeader = Self.entry("pixel", "{}")
        noHeader.header = []
        let headless = MessageBundle.encode([Self.entry("iphone", "{}"), noHeader], maxBytes: 1 << 20)[0].frame
        #expect(throws: MessageBundle.Failure.badHeader(entry: 1)) { try MessageBundle.decode(headless, maxEntries: 5) }
        // A length field claiming more than the frame holds (4 GiB) is cut short, not read past the end.
        #expect(throws: MessageBundle.Failure.truncated(entry: 0)) {
            try MessageBundle.decode([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3], maxEntries: 5)
        }
    }

    /// Random bytes and random corruptions of a valid bundle either decode to entries within the bounds or throw.
    @Test func randomBytesNeverCrash() {
        var random = SplitMix64(seed: 15)
        let valid = MessageBundle.encode((0..<4).map { Self.entry("d\($0)", "{\"req\":\($0)}") },
                                         maxBytes: 1 << 20)[0].frame
        for round in 0..<5_000 {
            var bytes = valid
            if round % 2 == 0 {
                bytes = random.bytes(random.below(64))
            } else {
                for _ in 0..<(1 + random.below(4)) { bytes[random.below(bytes.count)] = random.byte() }
            }
            if let entries = try? MessageBundle.decode(bytes, maxEntries: 4) {
                #expect(!entries.isEmpty && entries.count <= 4)
                #expect(entries.allSatisfy { !$0.device.isEmpty && $0.device.count <= Limits.maxIDBytes })
            }
        }
    }
}
