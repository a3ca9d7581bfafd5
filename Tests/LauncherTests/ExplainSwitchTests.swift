import Foundation
import LabTestSupport
import Testing
@testable import Launcher

/// `synclab explain` on the broken half of a lesson tells what the device really did, from its own events, and names
/// the switch; on the correct half (the same user, step for step) the same words never appear.
@Suite(.serialized) struct ExplainSwitchTests {
    struct Case: Sendable, CustomStringConvertible {
        let lesson: String
        let broken: String
        let correct: String
        /// The draft whose op is explained (its first op on the device).
        let draft: String?
        let says: [String]
        let never: [String]
        var description: String { lesson }
    }

    static let cases: [Case] = [
        Case(lesson: "idempotency-keys", broken: "new-key", correct: "same-key", draft: nil,
             says: ["a new idempotency key for attempt 2", "(switch keyPerAttempt)", "again under the new key",
                    "server applied it AGAIN (under key"],
             never: ["again with the same key", "resent with the same key"]),
        Case(lesson: "intent-persisted-first", broken: "memory", correct: "ledger", draft: nil,
             says: ["memory lost it before sending it", "(switch opQueue = memory)"], never: ["server applied it"]),
        Case(lesson: "leases", broken: "unleased", correct: "leased", draft: nil,
             says: ["stranded in 'sending'", "(switch leases = false)"], never: ["server applied it"]),
        Case(lesson: "reply-after-commit", broken: "e-phone", correct: "d-phone", draft: nil,
             says: ["answered for it before committing it", "holds an acknowledgement for an op the server does not",
                    "(switch server.replyBeforeCommit)"], never: ["server applied it as seq"]),
        Case(lesson: "server-idempotency", broken: "n-phone", correct: "k-phone", draft: nil,
             says: ["again although it knew the key", "(switch server.idempotency = false)"], never: []),
        Case(lesson: "reinstall-before-sync", broken: "unsynced", correct: "synced", draft: nil,
             says: ["the app was reinstalled before any pass sent it"], never: ["server applied it"]),
        Case(lesson: "push-is-a-hint", broken: "t-writer", correct: "c-writer", draft: "d3",
             says: ["t-reader's pass", "did not pull it", "pullOn=pushOnly", "(switch pullOn)"], never: []),
        Case(lesson: "read-your-writes", broken: "hidden-phone", correct: "keep-phone", draft: "essay",
             says: ["hidden-phone's replica left out it", "no longer sees their own write",
                    "(switch ownWrites = untilPulled)"], never: []),
        Case(lesson: "outbox-order", broken: "lifo-laptop", correct: "fifo-laptop", draft: "essay",
             says: ["sent its outbox newest first", "(switch outboxOrder = newestFirst)"], never: []),
    ]

    /// The story of the device's first op (on `draft`, if given), from `synclab explain`.
    static func story(_ folder: String, device: String, draft: String?) throws -> String {
        let events = try String(contentsOfFile: "\(folder)/events.jsonl", encoding: .utf8)
        let saved = events.split(separator: "\n").first { line in
            line.contains("\"proc\":\"\(device)\",\"type\":\"op.saved\"")
                && (draft.map { line.contains("\"draft\":\"\($0)\"") } ?? true)
        }
        let key = try #require(saved.flatMap { line in
            line.range(of: "\"key\":\"").map { String(line[$0.upperBound...].prefix { $0 != "\"" }) }
        }, "no op saved on \(device)")
        let (status, output) = try EndToEndTests.synclab(["explain", folder, key], limit: 60)
        #expect(status == 0, "\(output)")
        return output
    }

    @Test(arguments: ExplainSwitchTests.cases)
    func theBrokenHalfsStoryNamesWhatReallyHappenedAndItsSwitch(_ c: Case) throws {
        let r = try SwitchMarksTests.render(c.lesson)
        let broken = try Self.story(r.folder, device: c.broken, draft: c.draft)
        for words in c.says { #expect(broken.contains(words), "\(c.lesson): \(c.broken)'s story:\n\(broken)") }
        for words in c.never { #expect(!broken.contains(words), "\(c.lesson): \(c.broken)'s story:\n\(broken)") }
        // The correct half's story of the same step names no switch: the same sentences cannot come from anywhere.
        let correct = try Self.story(r.folder, device: c.correct, draft: c.draft)
        #expect(!correct.contains("(switch "), "\(c.lesson): \(c.correct)'s story:\n\(correct)")
        for words in c.says where words.hasPrefix("(switch") { #expect(!correct.contains(words)) }
    }
}
