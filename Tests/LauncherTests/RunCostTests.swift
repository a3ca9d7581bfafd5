import SyncProtocol
import Testing
@testable import Launcher

/// The scenario's CPU (stats.json `cpuSecondsAtHeal` − `cpuSecondsAtScenario`), which the report prints per delivered
/// change and `synclab bench` sets beside its peers: per process, a restarted process from its restart, nothing
/// without the scenario's figures.
@Suite struct RunCostTests {
    @Test func scenarioCPUIsEachProcessesDifference() throws {
        let stats = try JSONValue.parse("""
            {"cpuSecondsAtScenario": {"server": 1.5, "broker": 0.25, "pool-1": 3.0},
             "cpuSecondsAtHeal": {"server": 2.0, "broker": 0.5, "pool-1": 10.0, "d7": 0.75}}
            """)
        let cpu = RunCost.scenarioCPUSeconds(stats)
        #expect(cpu == ["server": 0.5, "broker": 0.25, "pool-1": 7.0, "d7": 0.75])
    }

    /// A process restarted during the scenario has a counter that began again: its end is below its start, and what
    /// it spent since the restart is counted.
    @Test func aRestartedProcessCountsFromItsRestart() throws {
        let stats = try JSONValue.parse("""
            {"cpuSecondsAtScenario": {"server": 4.0}, "cpuSecondsAtHeal": {"server": 1.25}}
            """)
        #expect(RunCost.scenarioCPUSeconds(stats) == ["server": 1.25])
    }

    @Test func noScenarioFiguresNoCPU() throws {
        #expect(RunCost.scenarioCPUSeconds(try JSONValue.parse(#"{"cpuSecondsAtHeal": {"server": 1}}"#)).isEmpty)
        #expect(RunCost.scenarioCPUSeconds(try JSONValue.parse("{}")).isEmpty)
    }
}
