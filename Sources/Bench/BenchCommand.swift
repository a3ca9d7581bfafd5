import Foundation
import LabKit
import Launcher

/// `synclab bench`: parses its command line, runs the bench, writes `bench.json` and `bench.html`, prints the table.
/// Exit 0 when every figure was measured, 1 when a section could not be, 2 for a bad command line.
public enum BenchCommand {
    static let spec = CommandSpec(
        name: "synclab bench", summary: "measure the lab against this machine's own floor and against NATS and Redis",
        usage: "synclab bench [--out DIR] [--quick] [--no-peers] [--simulation] [--sim-10k] [--scale] [--broker]",
        flags: [
            Flag("out", value: "DIR",
                help: "where bench.json and the runs it made go (default: runs/bench-YYYYMMDD-HHMMSS)"),
            Flag("quick", help: "fewer samples, 20 devices instead of 100, growth at 3, 10 and 30 devices: a sanity "
                + "run"),
            Flag("no-peers", help: "skip the NATS JetStream and Redis peers (they need nats-server and redis-server)"),
            Flag("simulation", help: "only the simulation's figures (synclab sim: seven-days, a day of 1,000 devices, "
                + "seed 000 at 400 installs per platform for 7 days; seconds, device-days/s, memory per device)"),
            Flag("scale", help: "only topologies/load-10000.json5: 10,000 pooled devices of 500 accounts as "
                + "real processes, checked; wall time (target ≤ 10 min), the launcher's memory, each pool's "
                + "resident set (--quick: 200 devices)"),
            Flag("broker", help: "only the broker: hints/s of 20 registered devices over 25,000 notices (events on), "
                + "the raw ZeroMQ fan-out of as many messages beside it, and their ratio (target ≥ 0.5×)"),
            Flag("sim-10k", help: "the simulation also plays 10,000 devices for one simulated day (minutes; "
                + "docs/SIMULATION.md)"),
            Flag("bin", value: "DIR",
                help: "where the synclab-* executables are (default: beside synclab, or $SYNCLAB_BIN)"),
        ],
        footer: "Figures: floor (zmq round trip hot and from idle, with the CPU a round trip from idle costs beside a\n"
            + "plain socket's, SQLite commit normal and full, push-path floor, and the skeleton: the lab's messages\n"
            + "for 3 and 100 devices, one process a role, with none of its work),\n"
            + "propagation with 3 and 100 devices (100 processes, and one pool), server ops/s and pulled changes/s,\n"
            + "broker hints/s beside a raw fan-out, resident memory, the simulation's speed and memory per device\n"
            + "(seven-days, a day of 1,000 devices, seed 000 at 400 installs per platform for 7 days; --quick: 100\n"
            + "devices, no seed 000; --sim-10k: 10,000 devices for a day).\n"
            + "The server and broker write events, as in a run.\n"
            + "Cost growth: propagation and CPU per delivered edit at 3, 10, 30, 100 and 300 devices of one account,\n"
            + "drawn log-log in bench.html with the growth exponent. Peers: the same push path (SQLite commits on "
                + "both\n"
            + "devices) on NATS JetStream and on Redis streams, started by the bench on free ports (peers.nats,\n"
            + "peers.redis), printed beside SyncLab's with the ratio.\n"
            + "Targets are printed as met or missed with the ratio; the last block judges the cost targets against\n"
            + "the best peer of the same run (bench.json targets.*), each beside the skeleton's ratio to the same\n"
            + "peer (no work at all); docs/PERFORMANCE.md says where the time goes.")

    public static func main(_ arguments: [String]) -> Int32 {
        // A process of the skeleton (`Skeleton.measure` starts them): not a user's command, so not in the help.
        if arguments.first == "--skeleton-node" { return Skeleton.node(Array(arguments.dropFirst())) }
        let options = spec.parseOrExit(arguments)
        guard options.positional.isEmpty else {
            Output.stderr("synclab bench: unexpected argument \(options.positional[0])\n")
            return 2
        }
        let out = options.string("out") ?? RunFolder.timestamped(base: "runs", name: "bench").root
        let bin = options.string("bin") ?? ProcessInfo.processInfo.environment["SYNCLAB_BIN"]
            ?? LauncherCommand.executableDirectory()
        var bench = Bench(out: out, bin: bin, quick: options.has("quick"))
        bench.peers = !options.has("no-peers")
        bench.tenThousand = options.has("sim-10k")
        do {
            if options.has("scale") {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                bench.section("scale: \(bench.quick ? "200" : "10,000") pooled devices, real processes") {
                    try $0.measureScale()
                }
            } else if options.has("broker") {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                bench.section("broker: hints against a raw fan-out") { try $0.measureBroker() }
            } else if options.has("simulation") {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                bench.section("simulation: seconds per run, device-days per second, memory per device") {
                    try $0.measureSimulation()
                }
            } else {
                try bench.run()
            }
        } catch {
            bench.failures.append("floor: \(error)")
        }
        let path = "\(out)/bench.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data((bench.json.description + "\n").utf8))
        let html = "\(out)/bench.html"
        _ = FileManager.default.createFile(atPath: html, contents: Data(bench.html.utf8))
        let table = options.has("scale") ? bench.scaleTable : options.has("broker") ? bench.brokerTable
            : options.has("simulation") ? bench.simulationTable : bench.table
        Output.stdout(table
            + "bench.json: \(path)\nbench.html: \(html)\n")
        for failure in bench.failures { Output.stderr("synclab bench: not measured: \(failure)\n") }
        return bench.failures.isEmpty ? 0 : 1
    }
}
