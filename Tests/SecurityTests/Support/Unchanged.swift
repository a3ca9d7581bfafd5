import Foundation
import LabTestSupport
import Testing

extension SecureLab {
    /// Runs `attack`, then checks it changed nothing: the server's rows are the same and the broker accepted no hint.
    func expectUnchanged(_ attack: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) throws {
        settleNotices()
        let rows = try databaseSnapshot()
        let hints = hintsAccepted
        try attack()
        #expect(try databaseSnapshot() == rows, "the attack changed the server's database",
                sourceLocation: sourceLocation)
        #expect(hintsAccepted == hints, "the attack made the broker accept a hint", sourceLocation: sourceLocation)
        #expect(serverAlive && brokerAlive, "a process died", sourceLocation: sourceLocation)
    }

    /// A push made before the attack reaches the broker as a notice after its reply, on another connection: waits
    /// (bounded) until the broker has taken every notice the server sent, so that the hint a late notice makes is
    /// not blamed on the attack (a race a loaded machine can lose: the likely cause of a once-seen WireTests failure).
    func settleNotices() {
        _ = eventually(timeout: 10) {
            events(brokerEvents, type: "notice.received").count >= events(serverEvents, type: "notice.sent").count
        }
    }

    /// Waits (bounded) until `condition` holds; false if it never did.
    func eventually(timeout: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(10_000)
        }
        return try condition()
    }
}
