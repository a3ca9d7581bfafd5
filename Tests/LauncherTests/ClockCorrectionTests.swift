import Foundation
import LabKit
import LabTestSupport
import SyncProtocol
import Testing
@testable import Launcher

/// Each host's events put on the launcher's clock when `events.jsonl` is merged (docs/HOSTS.md, "Clock offsets"),
/// from hand-made offsets and event files: no bed, no process.
@Suite struct ClockCorrectionTests {
    static func offset(_ phase: String, _ ms: Double, pm uncertainty: Double, at micros: Int64) -> ClockOffset {
        ClockOffset(phase: phase, offsetMs: ms, uncertaintyMs: uncertainty, samples: 8, atMicros: micros)
    }

    @Test func theOffsetIsInterpolatedFromStartToEndAndHeldOutside() {
        let c = ClockCorrection([Self.offset("end", 70, pm: 1, at: 3_000_000),
                                 Self.offset("start", 50, pm: 1, at: 1_000_000)])
        #expect(c.applied)
        #expect(c.offsetMicros(at: 2_000_000) == 60_000)
        #expect(c.offsetMicros(at: 0) == 50_000 && c.offsetMicros(at: 9_000_000) == 70_000)
        #expect(c.corrected(4_000_000) == 3_930_000)
        // Inside its own error bar an offset is no evidence of a skew: nothing moves (the test bed's case).
        let bed = ClockCorrection([Self.offset("start", 0.2, pm: 0.4, at: 1), Self.offset("end", -0.1, pm: 0.3, at: 2)])
        #expect(!bed.applied && bed.corrected(5_000) == 5_000)
        #expect(HostsReport.merge(.object([("merge", bed.json)])).hasPrefix("as written"))
        #expect(HostsReport.merge(.object([("merge", c.json)])) == "shifted by -50.00 → -70.00 ms")
        // A run folder from before the merge was corrected.
        #expect(HostsReport.merge(.object([])) == "on the host's own clock")
    }

    @Test func aSkewedHostsEventsAreMergedOnTheLaunchersClock() throws {
        let home = TempFolder()
        let folder = RunFolder(root: try home.folder("run"))
        try FileManager.default.createDirectory(atPath: folder.path("events"), withIntermediateDirectories: true)
        // The launcher's truth: it cut the network at 1.030 s, after the server (on a host 50 ms ahead) applied an
        // op at 1.020 s, which the host's clock wrote as 1.070 s.
        let clock = SimClock(epochMicros: 1_000_000, scale: 100)
        try "{\"wall\":1030000,\"sim\":3,\"proc\":\"launcher\",\"type\":\"network.partitioned\"}\n"
            .write(toFile: folder.eventsPath(for: "launcher"), atomically: true, encoding: .utf8)
        try "{\"wall\":1070000,\"sim\":7,\"proc\":\"server\",\"type\":\"op.applied\",\"key\":\"k1\",\"seq\":1}\n"
            .write(toFile: folder.eventsPath(for: "server"), atomically: true, encoding: .utf8)
        let skew = ClockCorrection([Self.offset("start", 50, pm: 0.5, at: 900_000),
                                    Self.offset("end", 50, pm: 0.5, at: 2_000_000)])
        folder.mergeEvents(corrections: ["server": skew], clock: clock)
        let merged = home.text("run/events.jsonl").split(separator: "\n").map(String.init)
        #expect(merged == ["{\"wall\":1020000,\"sim\":2,\"proc\":\"server\",\"type\":\"op.applied\",\"key\":\"k1\","
                           + "\"seq\":1}",
                           "{\"wall\":1030000,\"sim\":3,\"proc\":\"launcher\",\"type\":\"network.partitioned\"}"],
                "\(merged)")
        // Each host's own file keeps its own times.
        #expect(home.text("run/events/server.jsonl").contains("\"wall\":1070000"))
        // Without the correction the same files merge in the host's order: the check above can fail.
        folder.mergeEvents()
        #expect(home.text("run/events.jsonl").hasPrefix("{\"wall\":1030000"))
    }
}
