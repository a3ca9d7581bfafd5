import Testing
@testable import Launcher

/// monotonic-writes and intent (issue 30) on hand-made run folders: a device's two updates of one draft applied in
/// the reverse of the order the user made them, and a change whose content is not what the user wrote.
@Suite struct OrderCheckTests {
    /// Device a saves k2 ("T2") then k3 ("T3") on d1 after k1; the server applies k3 at seq 2 and k2 at seq 3, so d1
    /// ends with the older text. Replicas and shadows follow the server: every other check holds.
    static func reversedUpdates() -> RunFixture {
        var fixture = try! RunFixture()
        fixture.addUserUpdateOfD1(16, key: "k2", title: "T2")
        fixture.addUserUpdateOfD1(17, key: "k3", title: "T3")
        fixture.changes += [
            .init(seq: 2, draft: "d1", key: "k3", origin: "a", action: "update", title: "T3", version: 2),
            .init(seq: 3, draft: "d1", key: "k2", origin: "a", action: "update", title: "T2", version: 3),
        ]
        fixture.serverDrafts = [("d1", "T2", "B", 3)]
        fixture.deviceDrafts = ["a": [("d1", "T2", "B", 3)], "b": [("d1", "T2", "B", 3)]]
        fixture.moveCursors(to: 3)
        return fixture
    }

    @Test func writesAppliedAgainstTheirSavedOrderBreakMonotonicWritesAndIntent() throws {
        let report = try Self.reversedUpdates().report()
        for result in report.invariants where !["monotonic-writes", "intent"].contains(result.name) {
            #expect(result.held, "\(result.name) should hold: \(result.detail)")
        }
        let writes = try #require(report.invariant("monotonic-writes"))
        #expect(!writes.held)
        #expect(writes.detail.contains("a saved k2 (update d1, saved on a at 16s) before k3"), "\(writes.detail)")
        #expect(writes.detail.contains("the server applied k3 at seq 2 and k2 only after it, at seq 3"),
                "\(writes.detail)")
        #expect(writes.violations.first?.device == "a")
        let intent = try #require(report.invariant("intent"))
        #expect(!intent.held)
        #expect(intent.detail.contains("draft d1 of acme ends \"T2\" / \"B\" on the server, but the users' edits in "
            + "the order each device saved them give \"T3\" / \"B\": the last is k3"), "\(intent.detail)")
        #expect(intent.detail.contains("the server's last change of it, seq 3, applied k2"), "\(intent.detail)")
        #expect(!report.passed)
    }

    /// The same two updates applied in the order they were saved: both checks hold.
    @Test func writesInTheirSavedOrderHold() throws {
        var fixture = Self.reversedUpdates()
        fixture.changes = [fixture.changes[0],
                           .init(seq: 2, draft: "d1", key: "k2", origin: "a", action: "update", title: "T2",
                               version: 2),
                           .init(seq: 3, draft: "d1", key: "k3", origin: "a", action: "update", title: "T3",
                               version: 3)]
        fixture.serverDrafts = [("d1", "T3", "B", 3)]
        fixture.deviceDrafts = ["a": [("d1", "T3", "B", 3)], "b": [("d1", "T3", "B", 3)]]
        let report = try fixture.report()
        for result in report.invariants { #expect(result.held, "\(result.name): \(result.detail)") }
        #expect(report.invariant("intent")?.detail == "1 drafts end as the users' saved edits, in each device's "
            + "order, give them")
    }

    /// The server's change and draft hold a title the user never wrote (a tampered or mangled apply): the order is
    /// right, so only intent fails.
    @Test func aChangeThatIsNotTheUsersEditBreaksIntentOnly() throws {
        var fixture = try RunFixture()
        fixture.events.append(fixture.event(2, "launcher", "scenario.action",
            "\"action\":\"edit\",\"target\":\"a\",\"draft\":\"d1\",\"op\":\"create\",\"title\":\"T\",\"body\":\"B\","
                + "\"key\":\"k1\""))
        fixture.changes = [.init(seq: 1, draft: "d1", key: "k1", origin: "a", title: "Tampered")]
        fixture.serverDrafts = [("d1", "Tampered", "B", 1)]
        fixture.deviceDrafts = ["a": [("d1", "Tampered", "B", 1)], "b": [("d1", "Tampered", "B", 1)]]
        let report = try fixture.report()
        for result in report.invariants where result.name != "intent" {
            #expect(result.held, "\(result.name) should hold: \(result.detail)")
        }
        let intent = try #require(report.invariant("intent"))
        #expect(!intent.held)
        #expect(intent.detail.contains("ends \"Tampered\" / \"B\" on the server, but the users' edits in the order "
            + "each device saved them give \"T\" / \"B\": the last is k1 (create d1"), "\(intent.detail)")
    }
}
