import Foundation

/// One edit as the peers carry it: the edit's index in the run (to find when it was saved), its idempotency key, the
/// draft, the device that saved it and the body.
struct PeerChange: Equatable, Sendable {
    let edit: Int
    let key: String
    let draft: String
    let origin: String
    let body: String

    private static let separator: UInt8 = 0x1F

    /// The stored message: the fields joined by the unit separator (none of them may hold it).
    var payload: [UInt8] {
        Array([String(edit), key, draft, origin].joined(separator: "\u{1F}").utf8) + [Self.separator] + Array(body.utf8)
    }
}

/// In an extension, so the memberwise initializer stays.
extension PeerChange {
    /// Reads a payload written by `payload`; nil when it is not one.
    init?(payload: [UInt8]) {
        let parts = payload.split(separator: Self.separator, maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, let edit = Int(String(decoding: parts[0], as: UTF8.self)) else { return nil }
        self.edit = edit
        key = String(decoding: parts[1], as: UTF8.self)
        draft = String(decoding: parts[2], as: UTF8.self)
        origin = String(decoding: parts[3], as: UTF8.self)
        body = String(decoding: parts[4], as: UTF8.self)
    }
}
