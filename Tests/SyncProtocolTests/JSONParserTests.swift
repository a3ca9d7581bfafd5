import Foundation
@testable import SyncProtocol
import Testing

/// `JSONValue.parse` reads with `JSONParser`; the Foundation path it replaced (`JSONChecker` then `JSONDecoder`) is
/// the reference: for every text both accept or both refuse, and what they accept is the same value, case for case
/// (an `.int` is not a `.double` here, though `==` lets them be equal) and key for key in the same order.
@Suite("JSONParser")
struct JSONParserTests {
    /// The two values are the same case with the same payload, objects' keys in the same order.
    static func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern
        case let (.string(x), .string(y)): return Array(x.utf8) == Array(y.utf8)
        case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && identical($0.1, $1.1) }
        default: return false
        }
    }

    /// The Foundation path's reading of `text`. Foundation's JSONDecoder traps (index out of range) on some bare
    /// numbers at the top level, "534829138472" for one, so a text the checker finds to be one bare number is read
    /// inside an array (the same number).
    static func reference(_ text: String) -> JSONValue? {
        let bytes = Array(text.utf8)
        var bare = false
        do {
            try JSONChecker.check(bytes, schema: .any)
        } catch .notAnObject {
            let first = bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
            bare = first == UInt8(ascii: "-") || (first.map { (0x30...0x39).contains($0) } ?? false)
        } catch {
            return nil
        }
        guard bare else { return try? JSONValue.parseWithFoundation(text) }
        return (try? JSONValue.parseWithFoundation("[\(text)]"))?.arrayValue?.first
    }

    /// Both ways agree on `text`; the message says how they differ.
    static func disagreement(_ text: String) -> String? {
        let fast = text.utf8.withContiguousStorageIfAvailable { JSONParser.parse($0) } ?? nil
        let reference = Self.reference(text)
        switch (fast, reference) {
        case (nil, nil): return nil
        case let (f?, r?): return identical(f, r) ? nil : "\(text.debugDescription): parser \(f), Foundation \(r)"
        case let (f?, nil): return "\(text.debugDescription): parser accepts (\(f)), Foundation refuses"
        case let (nil, r?): return "\(text.debugDescription): parser refuses, Foundation accepts (\(r))"
        }
    }

    @Test("numbers: whole values that fit are ints however written, the rest doubles, as Foundation reads them")
    func numbers() {
        let texts = [
            "0", "-0", "1", "-1", "12", "1.0", "-1.0", "1.5", "-3.25", "1e2", "1E+2", "1e-2", "2.5e-3", "0.0", "-0.0",
            "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
            "18446744073709551616", "123456789012345678901234567890", "1e19", "9.2233720368547758e18", "1e400",
            "-1e400", "4.9e-324", "1e-400", "0.1", "0.30000000000000004", "1767225600000000", "86400.001",
            "3.0e0", "100e-2", "-9.223372036854775808e18", "9.2233720368547758e18", "-9223372036854775808.0",
            "9007199254740993", "9007199254740993.0", "1.0000000000000001", "12345678901234567.5",
            "-12345678901234567.5",
            "123456789012345678901234567890e-12", "1000000000000000000000e-3",
            "10000000000000000000000000000000000000000000e-26", "1.5000e18", "4.5e15", "4.5e16", "-4.5e16",
            "[1, 2.0, 2.5, -0, 1e3]",
        ]
        for text in texts {
            #expect(Self.disagreement(text) == nil, "\(Self.disagreement(text) ?? "")")
        }
    }

    @Test("strings, escapes and surrogates, keys sorted, the grammar's edges")
    func stringsAndStructure() {
        let texts = [
            #""""#, #""plain""#, #""\" \\ \/ \b \f \n \r \t""#, #""\u00e9\ud83c\udf0d""#, #""\u0000""#,
            #""\ud83c""#, #""\udf0d""#, #""\ud83c\u0041""#, #""\ud83cx""#, #""Grüße, 世界 🌍""#, #""\u12""#, #""\x""#,
            "\"tab\tinside\"", #"{"b":1,"a":2,"c":{"z":[],"y":{}}}"#, #"{"a":1,"a":2}"#, #"{"b":1,"a":2,"b":3}"#,
            #"{"é":1,"e":2,"E":3,"ä":4}"#, " { \"a\" : [ 1 , { } ] } ", "[1,]", "{\"a\":1,}", "{,}", "[,1]",
            "{\"a\"}", "{\"a\":}", "01", "1.", ".5", "+1", "1e", "-", "NaN", "true", "false", "null", "nul", "[1] x",
            "", " ", "{", "[", "\"open", "[[[]]]", "\t\r\n[1]\n",
            String(repeating: "[", count: Limits.maxDepth) + String(repeating: "]", count: Limits.maxDepth),
            String(repeating: "[", count: Limits.maxDepth + 1) + String(repeating: "]", count: Limits.maxDepth + 1),
            #"{"wall":1767225600123456,"sim":12.5,"proc":"u1-2","type":"op.sent","key":"u1-2-a1b2-3","attempt":1}"#,
        ]
        for text in texts {
            #expect(Self.disagreement(text) == nil, "\(Self.disagreement(text) ?? "")")
        }
    }

    /// A random value of the kinds event lines and control arguments hold.
    static func randomValue(_ rng: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch rng.below(depth > 3 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(rng.below(2) == 0)
        case 2: return .int(Int(truncatingIfNeeded: rng.next()) >> rng.below(64))
        case 3:
            let double = Double(bitPattern: rng.next())
            return .double(double.isFinite ? double : Double(rng.below(1_000_000)) / 1000)
        case 4:
            let alphabet: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "é", "世", "🌍",
                                              "\u{7F}", "\u{2028}"]
            var text = ""
            for _ in 0..<rng.below(12) { text.unicodeScalars.append(alphabet[rng.below(alphabet.count)]) }
            return .string(text)
        case 5: return .array((0..<rng.below(5)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var pairs: [(String, JSONValue)] = []
            for n in 0..<rng.below(6) { pairs.append(("k\(rng.below(50))-\(n)", randomValue(&rng, depth: depth + 1))) }
            return .object(pairs)
        }
    }

    @Test("random values as the writer writes them, and random damage to them: the same answer both ways")
    func randomTexts() {
        var rng = SplitMix64(seed: 16)
        var disagreements: [String] = []
        for _ in 0..<3_000 {
            let text = Self.randomValue(&rng).description
            if let problem = Self.disagreement(text) { disagreements.append(problem) }
            // The same text with one byte changed, dropped or doubled (kept only when it is still UTF-8).
            var bytes = Array(text.utf8)
            guard !bytes.isEmpty else { continue }
            let at = rng.below(bytes.count)
            switch rng.below(3) {
            case 0:
                let damage = Array("{}[]\",:0-.eE\\u ".utf8)
                bytes[at] = damage[rng.below(damage.count)]
            case 1: bytes.remove(at: at)
            default: bytes.insert(bytes[at], at: at)
            }
            guard let damaged = String(validating: bytes, as: UTF8.self) else { continue }
            if let problem = Self.disagreement(damaged) { disagreements.append(problem) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }

    @Test("a refusal still says why, as the checked path always did")
    func refusalsExplain() throws {
        let error = try #require(throws: (any Error).self) { try JSONValue.parse(#"{"a":1,"a":2}"#) }
        #expect("\(error)".contains("not JSON"))
        #expect("\(error)".contains("duplicateKey"))
    }
}
