import Foundation
import LabTestSupport
import Testing

@testable import Launcher

/// Every period a server fault is on is a band on the report's timeline, whichever runtime knob it is: real runs of
/// the two shipped topologies whose faults the timeline once left out (`dropRequest` from the server's flags,
/// `failCommit` from a `faults` step), through the launcher and real processes.
@Suite(.serialized) struct FaultBandTests {
    /// The run's report, its timeline model and report.html.
    static func report(_ topology: String) throws -> (run: EndToEndTests.Run, model: TimelineModel, html: String) {
        let run = try EndToEndTests.run(topology, limit: 240)
        let report = try Report.make(folder: RunFolder(root: run.home.file("run")))
        let model = TimelineModel(events: report.data.events, devices: report.timelineDevices,
                                  serverFlags: report.serverFlagFaults)
        return (run, model, run.home.text("run/report.html"))
    }

    static func serverFaultBands(_ model: TimelineModel) -> [TimelineModel.Band] {
        model.bands.filter { $0.kind == .fault && $0.lane == TimelineModel.serverLane }
    }

    @Test func aDropRequestFromTheServersFlagsIsABandOverTheWholeRun() throws {
        let (run, model, html) = try Self.report("unknown-outcome-before-commit")
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "\(run.failedInvariants)\n\(run.output)")
        let bands = Self.serverFaultBands(model)
        let band = try #require(bands.first { $0.label.contains("dropRequest 0.33") }, "\(bands)")
        let dropped = Self.report(run).filter { $0.type == "fault.injected" && $0.string("kind") == "dropRequest" }
        #expect(!dropped.isEmpty, "the fault was on")
        #expect(dropped.allSatisfy { band.start <= $0.sim && $0.sim <= band.end }, "the band spans every drop")
        #expect(html.contains("class=\"band band-fault\""))
        #expect(html.contains("faults (flags): dropRequest 0.33"))
    }

    @Test func aFailCommitFromAFaultsStepIsABandFromTheStepToTheStepThatEndsIt() throws {
        let (run, model, html) = try Self.report("lessons/reply-after-commit")
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 0, "the lesson's expectation: \(run.failedInvariants)\n\(run.output)")
        let bands = Self.serverFaultBands(model)
        let band = try #require(bands.first { $0.label == "faults: failCommit 1" }, "\(bands)")
        let sets = Self.report(run).filter { $0.type == "fault.set" && $0.proc == "server" }
        // The step at 2m turns it on, the one at 9m off (the heal's own `faults off` comes after).
        #expect(sets.count >= 2, "\(sets.map(\.sim))")
        #expect(band.start == sets.first?.sim && band.end == sets.dropFirst().first?.sim, "\(band) \(sets.map(\.sim))")
        // The commits that failed under it: an acknowledged op lost (the early account's reply went first).
        let failed = Self.report(run).filter { $0.type == "ack.lost" }
        #expect(!failed.isEmpty, "the fault was on")
        #expect(failed.allSatisfy { band.start <= $0.sim && $0.sim <= band.end })
        #expect(html.contains("faults: failCommit 1"))
    }

    /// The run's events, as report.html was made from them.
    static func report(_ run: EndToEndTests.Run) -> [Event] {
        (try? Report.make(folder: RunFolder(root: run.home.file("run"))).data.events) ?? []
    }
}
