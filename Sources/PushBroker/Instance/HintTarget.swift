import LabKit
import SyncProtocol

/// A registered device as the directives of its hints name it: its slot and id, with what every hint to it writes
/// rendered once at registration (its event fields, the start of the hint body). One per slot, shared by reference,
/// so a directive copies one pointer instead of the strings.
public final class HintTarget: Sendable, Equatable, CustomStringConvertible {
    public let slot: Int
    public let id: String
    public let account: String
    /// `,"device":"<id>"`: every hint event of the device.
    let deviceField: EventFragment
    /// `,"device":"<id>","account":"<account>"`: `hint.accepted`.
    let deviceAndAccountFields: EventFragment
    /// `{"account":"<account>","head":`, the hint body up to the head (keys sorted, as `Codec` writes them); nil when
    /// the account needs escaping (never in a lab's accounts file): then `Codec` writes the whole body.
    let bodyPrefix: [UInt8]?

    public init(slot: Int, id: String, account: String) {
        self.slot = slot
        self.id = id
        self.account = account
        deviceField = EventFragment("device", id)
        deviceAndAccountFields = EventFragment([("device", .string(id)), ("account", .string(account))])
        var plain = account
        bodyPrefix = plain.withUTF8 { JSONValue.isPlainString($0) } ? Array("{\"account\":\"\(account)\",\"head\":".utf8)
            : nil
    }

    public var description: String { id }

    public static func == (lhs: HintTarget, rhs: HintTarget) -> Bool {
        lhs.slot == rhs.slot && lhs.id == rhs.id && lhs.account == rhs.account
    }

    /// The body of `hint` to this device into `bytes` (replacing what it held, keeping its memory): byte for byte what
    /// `Codec.writeBody(of: .hint(…))` writes, from the prefix and the two numbers.
    func writeBody(of hint: HintRef, into bytes: inout [UInt8]) {
        guard let bodyPrefix else {
            Codec.writeBody(of: .hint(Hint(hint: hint.id, account: account, head: hint.head)), into: &bytes)
            return
        }
        // Room for the longest spelling (two 20-character numbers), made by lengthening the array (its memory stays),
        // written in place, cut back after: one uniqueness check, no append per piece.
        let longest = bodyPrefix.count + 64
        if bytes.count < longest { bytes.append(contentsOf: repeatElement(0, count: longest - bytes.count)) }
        let written = bytes.withUnsafeMutableBufferPointer { buffer in
            let out = buffer.baseAddress!
            var n = bodyPrefix.withUnsafeBufferPointer { prefix in
                for index in 0..<prefix.count { out[index] = prefix[index] }
                return prefix.count
            }
            n += Self.writeDecimal(hint.head, to: out + n)
            let key: StaticString = ",\"hint\":\"h-"
            for index in 0..<key.utf8CodeUnitCount { out[n + index] = key.utf8Start[index] }
            n += key.utf8CodeUnitCount
            n += Self.writeDecimal(hint.number, to: out + n)
            out[n] = UInt8(ascii: "\"")
            out[n + 1] = UInt8(ascii: "}")
            return n + 2
        }
        bytes.removeLast(bytes.count - written)
    }

    /// Writes `value` in decimal at `out`, as `String(value)` spells it (at most 20 bytes); returns how many.
    static func writeDecimal(_ value: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var start = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            start = 1
        }
        var magnitude = value.magnitude
        var digits = 1
        var bound: UInt = 10
        while digits < 20 && magnitude >= bound {
            digits += 1
            bound &*= 10
        }
        var index = start + digits
        repeat {
            index -= 1
            out[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        return start + digits
    }
}
