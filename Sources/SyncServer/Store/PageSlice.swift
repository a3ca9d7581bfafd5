import SyncProtocol

/// One page of an account's changes: those after the cursor, in seq order; `next` is the cursor to pull from next
/// (the last seq in the page, or the cursor itself when the page is empty) and `head` the account's newest seq.
public struct PageSlice: Sendable, Equatable {
    public var changes: [Change]
    public var next: Int
    public var head: Int

    public init(changes: [Change], next: Int, head: Int) {
        self.changes = changes
        self.next = next
        self.head = head
    }

    /// Bytes of page body left for changes: the decoder refuses bodies over `Limits.maxBodyBytes`, so a page stops
    /// before it would pass it even when the limit asks for more (large drafts make short pages).
    static let changeBudget = Limits.maxBodyBytes - 1024

    /// Keys, punctuation, numbers and booleans of one change never take more than this.
    static let fixedSize = 160

    /// An upper bound on the bytes `change` takes in a page body, from the lengths of its strings as JSON escapes
    /// them, without encoding it.
    static func encodedSize(of change: Change) -> Int {
        var size = fixedSize
        for text in [change.draft, change.origin, change.key, change.title ?? "", change.body ?? ""] {
            size += escapedLength(text)
        }
        return size
    }

    /// A cheaper, looser bound than `encodedSize(of:)`: every byte of a string escaped as `\u00xx`.
    static func sizeBound(of change: Change) -> Int {
        let text = change.draft.utf8.count + change.origin.utf8.count + change.key.utf8.count
            + (change.title?.utf8.count ?? 0) + (change.body?.utf8.count ?? 0)
        return fixedSize + 6 * text
    }

    /// Whether this page and `results` fit in one `pushResult` body (a push that asked for its page). A page alone
    /// always fits (`changeBudget`); with many results beside it one near the budget may not: then the results go
    /// alone and the device pulls the page.
    func fits(with results: [OpResult]) -> Bool {
        // A result's keys, punctuation, outcome, booleans and two integers of up to 20 digits take under 128 bytes.
        var size = 0
        for result in results {
            size += 128 + Self.escapedLength(result.key) + Self.escapedLength(result.reason ?? "")
        }
        var bound = size
        for change in changes { bound += Self.sizeBound(of: change) }
        if bound <= Self.changeBudget { return true }
        for change in changes { size += Self.encodedSize(of: change) }
        return size <= Self.changeBudget
    }

    static func escapedLength(_ text: String) -> Int {
        var length = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: length += 2
            case 0..<0x20: length += 6
            default: length += 1
            }
        }
        return length
    }
}
