import LabKit
import SyncProtocol

/// A registered device as the directives of its hints name it: its slot and id, with what every hint to it writes
/// rendered once at registration (its event fields, the start of the hint body). One per slot, shared by reference,
/// so a directive copies one pointer instead of the strings.
public final class HintTarget: Sendable, Equatable, CustomStringConvertible {
    public let slot: Int
    public let id: String
    public let account: String
    /// `,"device":"<id>","head":`: `hint.delivered` up to the head's value.
    let deliveredFields: EventFragment
    /// `,"device":"<id>","account":"<account>","head":`: `hint.accepted` up to the head's value.
    let acceptedFields: EventFragment
    /// `{"account":"<account>","head":`, the hint body up to the head (keys sorted, as `Codec` writes them); nil when
    /// the account needs escaping (never in a lab's accounts file): then `Codec` writes the whole body.
    let bodyPrefix: [UInt8]?

    public init(slot: Int, id: String, account: String) {
        self.slot = slot
        self.id = id
        self.account = account
        deliveredFields = EventFragment([("device", .string(id))], then: "head")
        acceptedFields = EventFragment([("device", .string(id)), ("account", .string(account))], then: "head")
        var plain = account
        let isPlain = plain.withUTF8 { JSONValue.isPlainString($0) }
        bodyPrefix = isPlain ? Array("{\"account\":\"\(account)\",\"head\":".utf8) : nil
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
        // The prefix, then the rest (at most 53 bytes: two 20-character numbers) spelled on the stack and copied once.
        // Emptied keeping its memory (`removeAll(keepingCapacity:)` goes through the general `replaceSubrange`).
        bytes.removeLast(bytes.count)
        bytes.append(contentsOf: bodyPrefix)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            let out = buffer.baseAddress!
            var n = JSONValue.writeDecimal(hint.head, to: out)
            let key: StaticString = ",\"hint\":\"h-"
            (out + n).update(from: key.utf8Start, count: key.utf8CodeUnitCount)
            n += key.utf8CodeUnitCount
            n += JSONValue.writeDecimal(hint.number, to: out + n)
            out[n] = UInt8(ascii: "\"")
            out[n + 1] = UInt8(ascii: "}")
            bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: n + 2))
        }
    }
}
