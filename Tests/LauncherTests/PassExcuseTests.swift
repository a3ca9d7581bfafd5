import Testing
@testable import Launcher

/// open-reaches-head excuses only what the scenario made impossible (issue 30): a refused or timed-out open with no
/// fault, kill, pause or offline behind it is judged like any other, and a device whose opens keep failing fails the
/// check even when its cursor happened to be current.
@Suite struct PassExcuseTests {
    /// Device b opens at 40 s and its pass ends `outcome` at cursor `cursor` (the head is 1).
    static func open(_ outcome: String, cursor: Int = 0, at t: Int = 40, pass: Int = 2) -> [String] {
        let fixture = try! RunFixture()
        return fixture.emptyPass(t, "b", pass: pass, trigger: "foreground", end: t + 1, cursor: cursor,
                                 outcome: outcome)
    }

    @Test func aRefusedOpenWithNoCauseInTheScenarioIsJudged() throws {
        var fixture = try RunFixture()
        fixture.events += Self.open("refused")
        let result = try #require(try fixture.report().invariant("open-reaches-head"))
        #expect(!result.held)
        #expect(result.detail.contains("b opened at 40s (foreground): the server's head was 1, the pass the open "
            + "started ended at cursor 0: the user saw data 1 change old; it ended refused with no cause in the "
            + "scenario"), "\(result.detail)")
    }

    @Test(arguments: [
        (#""launcher","type":"process.killed","target":"server","signal":"SIGKILL""#, "1 server down"),
        (#""launcher","type":"process.paused","target":"server","signal":"SIGSTOP""#, "1 server down"),
        (#""server","type":"fault.set","dropReply":1,"transient":0,"reject":0,"replyDelayMs":0,"dropRequest":0,"#
            + #""failCommit":0"#,
         "1 server fault"),
        (#""b","type":"net.offline""#, "1 offline"),
    ])
    func aFailedOpenWithACauseInTheScenarioIsExcused(event: String, words: String) throws {
        var fixture = try RunFixture()
        fixture.events.append("{\"wall\":1030000,\"sim\":30,\"proc\":" + event + "}")
        fixture.events += Self.open("timeout")
        let result = try #require(try fixture.report().invariant("open-reaches-head"))
        #expect(result.held, "\(result.detail)")
        #expect(result.detail.contains("1 excused: \(words)"), "\(result.detail)")
    }

    /// A partition excuses an open only when it cut the device's host from the server's: one between the broker
    /// and the devices leaves every pull possible.
    @Test(arguments: [(#"[["h1"],["h3"]]"#, true), (#"[["h3"],["h1","h2"]]"#, true), (#"[["h2"],["h3"]]"#, false)])
    func aPartitionExcusesAnOpenOnlyWhenItCutTheDeviceFromTheServer(hosts: String, excused: Bool) throws {
        var fixture = try RunFixture()
        let host = { (name: String, i: Int) in "\(name): { address: \"10.231.0.1\(i)\", identity: \"/k\" }" }
        fixture.topologyExtra = "transport: \"tcp\", hosts: { \(host("h1", 1)), \(host("h2", 2)), \(host("h3", 3)) }, "
            + "server: { host: \"h1\" }, broker: { host: \"h2\" },"
        fixture.accountExtra = "host: \"h3\","
        fixture.events.append(fixture.event(30, "launcher", "network.partitioned", "\"hosts\":\(hosts)"))
        fixture.events += Self.open("timeout")
        let result = try #require(try fixture.report().invariant("open-reaches-head"))
        #expect(result.held == excused, "\(result.detail)")
        #expect(result.detail.contains("1 excused: 1 partitioned") == excused, "\(result.detail)")
    }

    /// A fault turned off before the device's previous pass ended explains nothing later.
    @Test func aFaultThatEndedBeforeThePassExplainsNothing() throws {
        var fixture = try RunFixture()
        let off = #""dropReply":0,"transient":0,"reject":0,"replyDelayMs":0,"dropRequest":0,"failCommit":0"#
        let on = off.replacingOccurrences(of: "\"dropReply\":0", with: "\"dropReply\":1")
        fixture.events.append(fixture.event(20, "server", "fault.set", on))
        fixture.events.append(fixture.event(25, "server", "fault.set", off))
        fixture.events += Self.open("timeout")
        let result = try #require(try fixture.report().invariant("open-reaches-head"))
        #expect(!result.held, "\(result.detail)")
    }

    /// Three opens that all end in an error but find the cursor current: more than the bound of 2.
    @Test func opensThatKeepFailingBreakTheCheckEvenAtTheHead() throws {
        var fixture = try RunFixture()
        for (index, t) in [40, 50,
            60].enumerated() { fixture.events += Self.open("timeout", cursor: 1, at: t, pass: index + 2) }
        let result = try #require(try fixture.report().invariant("open-reaches-head"))
        #expect(!result.held)
        #expect(result.detail.contains("b: 3 of its 3 passes started by an app open ended in an error with no cause "
            + "in the scenario (first at 40s (timeout)), more than the bound of 2"), "\(result.detail)")
        // Two are within the bound.
        fixture.events.removeLast(2)
        #expect(try fixture.report().invariant("open-reaches-head")?.held == true)
    }
}
