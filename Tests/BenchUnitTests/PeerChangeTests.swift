import Testing
@testable import Bench

/// The message the peers store: what a sender writes a receiver reads back whole.
@Suite struct PeerChangeTests {
    @Test("a change read back from its payload is the change, whatever its body holds")
    func roundTrip() {
        for body in ["edit 1", "", "tabs\tand\nnewlines", "unit \u{1F} separators \u{1F}\u{1F} in the body", "é ☃"] {
            let change = PeerChange(edit: 42, key: "edit-42", draft: "draft-2", origin: "d0", body: body)
            #expect(PeerChange(payload: change.payload) == change, "\(body)")
        }
    }

    @Test("bytes that are not a change's payload are refused")
    func refused() {
        #expect(PeerChange(payload: []) == nil)
        #expect(PeerChange(payload: Array("42".utf8)) == nil)
        #expect(PeerChange(payload: Array("x\u{1F}k\u{1F}d\u{1F}o\u{1F}b".utf8)) == nil)
        #expect(PeerChange(payload: Array("1\u{1F}k\u{1F}d\u{1F}o".utf8)) == nil)
    }
}
