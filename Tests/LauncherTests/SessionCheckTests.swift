import Testing
@testable import Launcher

/// read-your-writes (issue 30) on hand-made run folders: device a writes d1's title "T2" (k2, applied at seq 2), then
/// begins another edit of d1 (k3) and the launcher records what it read (`saw`). Every other check holds.
@Suite struct SessionCheckTests {
    /// `saw` is the JSON of what a read before k3 showed of d1.
    static func fixture(saw: String, laterTitle: String? = nil) -> RunFixture {
        var fixture = try! RunFixture()
        fixture.addUserUpdateOfD1(16, key: "k2", title: "T2", saw: "null")
        fixture.addUserUpdateOfD1(18, key: "k3", title: "T3", saw: saw)
        fixture.changes.append(.init(seq: 2, draft: "d1", key: "k2", origin: "a", action: "update", title: "T2",
                                     version: 2))
        var seq = 3
        if let laterTitle {
            // b overwrites the title after k2 and before a's read; a pulled it.
            fixture.events.append(fixture.event(17, "b", "op.saved",
                "\"key\":\"kb\",\"draft\":\"d1\",\"action\":\"update\",\"account\":\"acme\",\"base\":2"))
            fixture.deviceOps["b"]!.append(.init(key: "kb", status: "completed", error: "", action: "update"))
            fixture.changes.append(.init(seq: 3, draft: "d1", key: "kb", origin: "b", action: "update",
                                         title: laterTitle, version: 3))
            seq = 4
        }
        fixture.changes.append(.init(seq: seq, draft: "d1", key: "k3", origin: "a", action: "update", title: "T3",
                                     version: seq))
        fixture.serverDrafts = [("d1", "T3", "B", seq)]
        fixture.deviceDrafts = ["a": [("d1", "T3", "B", seq)], "b": [("d1", "T3", "B", seq)]]
        fixture.moveCursors(to: seq)
        return fixture
    }

    @Test func aReadThatShowsTheOwnWriteHolds() throws {
        let report = try Self.fixture(saw: #"{"title":"T2","body":"B","deleted":false}"#).report()
        for result in report.invariants { #expect(result.held, "\(result.name): \(result.detail)") }
        #expect(report.invariant("read-your-writes")?.detail
            == "1 read of a draft the device had written, each showing the device's own writes")
    }

    /// The replica lost k2 while it waited for its page: a read showed the title from before it.
    @Test func aReadThatLostTheOwnWriteFails() throws {
        let report = try Self.fixture(saw: #"{"title":"T","body":"B","deleted":false}"#).report()
        for result in report.invariants where result.name != "read-your-writes" {
            #expect(result.held, "\(result.name) should hold: \(result.detail)")
        }
        let check = try #require(report.invariant("read-your-writes"))
        #expect(!check.held)
        #expect(check.detail.contains("a began k3 (update d1) at 18s and read its title as \"T\", though its own k2 "
            + "(saved at 16s, applied at seq 2) set it to \"T2\" and no change the server applied after it wrote "
            + "\"T\": the replica hid the user's own write"), "\(check.detail)")
        #expect(check.violations.first?.device == "a")
        #expect(!report.passed)
    }

    /// Another device's later write may show instead: b's title, applied at seq 3, after k2.
    @Test func aLaterWriteByAnotherDeviceMayShow() throws {
        let report = try Self.fixture(saw: #"{"title":"Tb","body":"B","deleted":false}"#, laterTitle: "Tb").report()
        #expect(report.invariant("read-your-writes")?.held == true,
                "\(report.invariant("read-your-writes")?.detail ?? "")")
    }

    /// A draft gone from the replica after the device wrote it.
    @Test func aMissingDraftFails() throws {
        let report = try Self.fixture(saw: "null").report()
        let check = try #require(report.invariant("read-your-writes"))
        #expect(!check.held)
        #expect(check.detail.contains("read no draft at all, though its own k2"), "\(check.detail)")
    }

    /// monotonic-reads: k2's read at version 1 means the replica shows version 2 once k2 is saved; k3's read at
    /// version 1 went back (the replica lost k2), at 2 or later it did not.
    @Test(arguments: [(1, false), (2, true), (3, true)])
    func aReadBelowTheVersionTheDeviceHadShownFailsMonotonicReads(version: Int, holds: Bool) throws {
        var fixture = Self.fixture(saw: "{\"title\":\"T2\",\"body\":\"B\",\"deleted\":false,\"version\":\(version)}")
        let first = #"{"title":"T","body":"B","deleted":false,"version":1}"#
        fixture.events = fixture.events.map {
            $0.replacingOccurrences(of: #""key":"k2","saw":null"#, with: #""key":"k2","saw":"# + first)
        }
        let report = try fixture.report()
        let check = try #require(report.invariant("monotonic-reads"))
        #expect(check.held == holds, "\(check.detail)")
        #expect(report.invariant("read-your-writes")?.held == true)
        if holds {
            #expect(check.detail == "1 read of a draft, none older than the device's read before it")
        } else {
            #expect(check.detail == "a read draft d1 at version 1 when it began k3 at 18s, though it had shown version "
                + "2 once it saved k2 at 16s: its reads went back")
            #expect(check.violations.first?.device == "a")
        }
    }

    /// A run folder written before edits carried `saw` has nothing to judge, and says so.
    @Test func noRecordedReadsIsSaid() throws {
        var fixture = Self.fixture(saw: "null")
        fixture.events = fixture.events.map { $0.replacingOccurrences(of: ",\"saw\":null", with: "") }
        let report = try fixture.report()
        #expect(report.invariant("read-your-writes")?.held == true)
        #expect(report.invariant("read-your-writes")?.detail.hasPrefix("no read to judge") == true)
        #expect(report.invariant("monotonic-reads")?.detail.hasPrefix("no read to judge") == true)
    }
}
