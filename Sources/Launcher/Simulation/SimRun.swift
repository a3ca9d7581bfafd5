import Foundation
import LabKit
import PushBroker
import Simulation
import SQLite
import SyncDevice
import SyncProtocol
import SyncServer

/// One run of a topology on the simulated machine (`synclab sim`): every server, broker and device is its instance
/// and sim shell in this process, on one virtual clock, playing the same timeline, heal and quiesce as `LabRun`, with
/// the launcher's steps sent as control messages the way `LabRun` sends them. It writes the same run folder, so
/// `Report.make(folder:)` judges it with the same code. Keep it in step with `LabRun`.
public final class SimRun: TopologyRunner {
    public let topology: Topology
    public let folder: RunFolder
    let quiet: Bool
    let clock: SimClock
    let world: SimWorld
    /// The command that replays this run, printed in the report.
    let replay: String
    private(set) var order: [String] = []
    let poolOf: [String: String]
    private(set) var poolDevices: [String: [String]] = [:]
    private var deviceConfigurations: [String: DeviceConfiguration] = [:]
    private var serverConfiguration: ServerConfiguration!
    private var brokerConfiguration: BrokerConfiguration!
    private var brokerDirectory: AccountDirectory!
    public internal(set) var notes: [String] = []
    /// Crash-anywhere (`--crash-anywhere N`): how many kills to draw from the seed, each of a device, the server or
    /// the broker at a directive, commit, send or reply boundary of its own; each killed process restarts a second
    /// later.
    let crashAnywhere: Int
    /// Crash points armed by `crash` steps and not yet fired, by process: the point and the target the step named.
    var armedCrashes: [String: [(point: String, target: String)]] = [:]
    /// Processes crash-anywhere killed, with the virtual µs at which each starts again.
    private var pendingRestarts: [(name: String, at: Int64)] = []
    /// Crash-anywhere's named crash points (issue 30): `crash` steps drawn from the seed (process, point of its
    /// role, moment, nth occurrence with work in flight 1–3), played with the timeline.
    private var anywhereSteps: [ScenarioStep] = []
    /// "process/point" of each crash point crash-anywhere armed: when one fires, its process starts again a second
    /// later, as a boundary kill's does (a topology's own `crash` step waits for a restart step or the heal).
    private var anywhereArmed: Set<String> = []
    /// Whether the scenario is still playing (crash-anywhere kills only then; heal brings everything back).
    private var inScenario = false

    /// Wall µs of simulated time 0 in every simulated run: 2026-01-01T00:00:00Z, so the bytes never depend on when.
    public static let epochMicros: Int64 = 1_767_225_600_000_000
    /// Processes start one real second before the scenario, as `LabRun`'s epoch is a second after it starts them.
    static let startMicros: Int64 = -1_000_000

    /// `storage` (default: `SimStorage.automatic` for the topology's device count) is where the SQLite databases
    /// live while the run lasts; the folder holds them as files when it ends either way.
    public init(topology: Topology, topologyText: String, folder: RunFolder, replay: String, quiet: Bool,
                storage: SimStorage? = nil, crashAnywhere: Int = 0) throws
    {
        self.topology = topology
        self.crashAnywhere = crashAnywhere
        self.folder = folder
        self.quiet = quiet
        self.replay = replay
        clock = SimClock(epochMicros: Self.epochMicros, scale: topology.timeScale)
        poolOf = topology.poolAssignment
        try folder.create(topologyText: topologyText, topology: topology, clock: clock)
        try? FileManager.default.removeItem(atPath: folder.socketDirectory)
        let run: JSONValue = .object([
            ("name", .string(topology.name)), ("seed", .int(Int(topology.seed))),
            ("timeScale", .double(topology.timeScale)), ("epochMicros", .int(Int(clock.epochMicros))),
            ("duration", .double(topology.duration)), ("ignoreExpect", .bool(topology.expectIgnored)),
            ("simulated", true), ("replay", .string(replay)), ("crashAnywhere", .int(crashAnywhere)),
        ])
        folder.write("run.json", run.description + "\n")
        world = try SimWorld(clock: clock, seed: topology.seed, eventsPath: folder.path("events.jsonl"),
                             start: Self.startMicros,
                             storage: storage ?? SimStorage.automatic(devices: topology.devices.count))
        try configure()
    }

    public func emit(_ type: String, _ fields: [(String, JSONValue)]) { world.log.emit("launcher", type, fields) }

    // MARK: - The whole run

    /// Where this run's databases live while it lasts.
    public var storage: SimStorage { world.storage }

    public func run() throws {
        emit(.processStarted, [("role", "launcher"), ("pid", .int(1)), ("topology", .string(topology.name)),
                                 ("seed", .int(Int(topology.seed))), ("timeScale", .double(topology.timeScale)),
                                 ("simulated", true)])
        var failure: Error?
        do {
            try startAll()
            world.onCrash = { [unowned self] name, point in self.crashed(name, at: point) }
            world.run(until: 0)
            phase("scenario")
            planCrashes()
            inScenario = true
            playTimeline()
            inScenario = false
            world.plannedCrashes.removeAll()
            pendingRestarts.removeAll()
            phase("heal")
            heal()
            phase("quiesce")
            quiesce()
            phase("check")
            collectFinalStats()
        } catch {
            failure = error
        }
        stopAll()
        emit(.processStopped, [("role", "launcher"), ("pid", .int(1))])
        // The databases reach the run folder's files here when they were in memory, whatever stopped the run.
        let written = Result { try world.tearDown() }
        if let failure { throw failure }
        try written.get()
    }

    private func phase(_ name: String) {
        emit(.phase, [("name", .string(name))])
        say("\(name)…")
    }

    // MARK: - Configurations: the argv `LabRun` passes, read by each role's own command line

    private func configure() throws {
        let arguments = RunArguments(topology: topology, folder: folder, server: "sim://server",
                                     notices: "sim://notices", broker: "sim://broker",
                                     epochMicros: clock.epochMicros, keys: nil)
        func common(_ name: String)
            -> [String] { arguments.common(name, control: "sim://\(name).control", events: nil) }
        // `--db` names where each database lives while the run lasts (a file, or memory the world keeps).
        func stored(_ args: [String]) throws -> [String] {
            guard let index = args.firstIndex(of: "--db"), index + 1 < args.count else { return args }
            var args = args
            args[index + 1] = try world.storePath(for: args[index + 1])
            return args
        }
        serverConfiguration = try ServerConfiguration(
            options: ServerConfiguration.command.parse(try stored(arguments.serverArguments) + common("server")))
        order.append("server")
        brokerConfiguration = try BrokerCommand.configuration(
            from: BrokerCommand.spec.parse(arguments.brokerArguments + common("broker")))
        brokerDirectory = try AccountDirectory.load(path: folder.accountsPath)
        order.append("broker")

        var pooled: [String] = []
        for account in topology.accounts {
            for device in account.devices {
                let args = try stored(arguments.deviceArguments(device, account: account.id,
                                                                token: ["--token", device.token]))
                deviceConfigurations[device.id] = try DeviceCommandLine.configuration(
                    DeviceCommandLine.spec.parse(args + common(device.id)))
                if let pool = poolOf[device.id] {
                    poolDevices[pool, default: []].append(device.id)
                    if !pooled.contains(pool) { pooled.append(pool) }
                } else {
                    order.append(device.id)
                }
            }
        }
        order += pooled.sorted(by: { $0.count != $1.count ? $0.count < $1.count : $0 < $1 })
    }

    // MARK: - Processes

    /// The sim processes behind a process name: a pool's devices, or the process itself.
    private func members(_ name: String) -> [String] { poolDevices[name] ?? [name] }

    private var incarnations: [String: Int] = [:]
    /// The (fake, deterministic) pid of each process's latest start.
    private var pids: [String: Int] = [:]

    /// Starts `name` (every device of a pool) as a new instance opened on its files.
    private func start(_ name: String) throws {
        let incarnation = (incarnations[name] ?? 0) + 1
        incarnations[name] = incarnation
        if name == "server" {
            let shell = try SimServerShell(serverConfiguration, world: world, databaseLabel: "server.sqlite")
            pids[name] = shell.pid
            emit(.processSpawned, [("target", "server"), ("pid", .int(shell.pid))])
            world.add(server: shell)
        } else if name == "broker" {
            let shell = SimBrokerShell(brokerConfiguration, directory: brokerDirectory, world: world)
            pids[name] = shell.pid
            emit(.processSpawned, [("target", "broker"), ("pid", .int(shell.pid))])
            world.add(broker: shell)
        } else {
            var shells: [SimDeviceShell] = []
            for id in members(name) {
                let generator = SeededGenerator.derived(seed: topology.seed, name: "ledger/\(id)/\(incarnation)")
                shells.append(try SimDeviceShell(deviceConfigurations[id]!, world: world, generator: generator))
            }
            pids[name] = shells.first?.pid ?? 0
            emit(.processSpawned, [("target", .string(name)), ("pid", .int(shells.first?.pid ?? 0))])
            if poolDevices[name] != nil {
                world.log.emit(name, .processStarted, [("role", "pool"), ("pid", .int(shells.first?.pid ?? 0)),
                                                         ("devices", .int(shells.count))])
            }
            for shell in shells { world.add(device: shell) }
        }
    }

    private func running(_ name: String) -> Bool { members(name).contains { world.isRunning($0) } }
    private func paused(_ name: String) -> Bool { members(name).contains { world.isPaused($0) } }

    /// `ping` until it answers, as `ControlClient.waitReady` does.
    private func waitReady(_ name: String) {
        for member in members(name) where world.isRunning(member) {
            _ = world.call(member, "ping")
        }
    }

    private func startAll() throws {
        say("starting \(order.count) processes (simulated)…")
        for name in order { try start(name) }
        for name in order { waitReady(name) }
    }

    /// `stop` to every process at once, as `LabRun.stopAll` asks; one that does not stop in 5 s is killed.
    private func stopAll() {
        for name in order.reversed() where running(name) {
            for member in members(name) {
                if world.isPaused(member) { world.resume(member) }
                if world.isRunning(member) { world.post(member, "stop") }
            }
        }
        let deadline = world.scheduler.now + 5_000_000
        // Every process of `order` is one the world runs: none running is `runningCount` 0, asked after every action
        // (a scan of `order` there would cost the number of processes per action).
        world.scheduler.run(until: deadline) { world.runningCount == 0 }
        for name in order where running(name) {
            for member in members(name) { world.kill(member) }
            notes.append("\(name) did not stop on request and was killed")
        }
    }

    // MARK: - Scenario

    private func playTimeline() {
        // Stable: a drawn crash step at the same moment as a scenario step plays after it.
        let steps = (topology.timeline() + anywhereSteps).enumerated()
            .sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        say("playing \(steps.count) steps over \(formatSim(topology.duration)) simulated")
        for step in steps {
            advance(to: world.micros(atSim: step.at))
            perform(step)
        }
        advance(to: world.micros(atSim: topology.duration))
    }

    /// Runs the world to virtual µs `target`, starting again on the way each process crash-anywhere killed.
    private func advance(to target: Int64) {
        while true {
            world.scheduler.run(until: target) { pendingRestarts.contains { $0.at <= target } }
            guard let next = pendingRestarts.min(by: { $0.at < $1.at }), next.at <= target else { return }
            world.run(until: next.at)
            pendingRestarts.removeAll { $0.name == next.name && $0.at == next.at }
            guard !running(next.name) else { continue }
            checkState(of: next.name)
            do {
                try start(next.name)
                // Before the ping: the new process may die again at once, and its death must follow its start.
                emit(.processRestarted, [("target", .string(next.name)), ("pid", .int(pids[next.name] ?? 0)),
                                           ("by", "crash-anywhere")])
                waitReady(next.name)
            } catch {
                notes.append("crash-anywhere could not restart \(next.name): \(error)")
            }
        }
    }

    // MARK: - Crash points and crash-anywhere

    /// Draws crash-anywhere's kills from the seed: a process (a device, a pool, the server or the broker), a moment
    /// in the scenario's first 80 %, and which of its boundaries after that moment it dies at (1 to 40).
    private func planCrashes() {
        guard crashAnywhere > 0 else { return }
        var rng = SeededGenerator.derived(seed: topology.seed, name: "crash-anywhere")
        let candidates = order
        let end = max(1, world.micros(atSim: topology.duration * 0.8))
        for _ in 0..<crashAnywhere {
            let name = candidates[Int(rng.next() % UInt64(candidates.count))]
            let member = members(name)[Int(rng.next() % UInt64(members(name).count))]
            let after = Int64(rng.next() % UInt64(end))
            let boundary = 1 + Int(rng.next() % 40)
            world.plannedCrashes.append(PlannedCrash(process: member, after: after, boundary: boundary))
        }
        // As many named crash points again, each of a process's own role, at the nth occurrence with work in
        // flight (drawn 1–3): over a sweep of seeds every window of every role is reached (the report's crash table).
        var points = SeededGenerator.derived(seed: topology.seed, name: "crash-anywhere/points")
        for _ in 0..<crashAnywhere {
            let name = candidates[Int(points.next() % UInt64(candidates.count))]
            let member = members(name)[Int(points.next() % UInt64(members(name).count))]
            let role = name == "server" ? "server" : name == "broker" ? "broker" : "device"
            let own = CrashPoint.allCases.filter { $0.role == role }
            let point = own[Int(points.next() % UInt64(own.count))]
            let at = topology.duration * 0.8 * Double(points.next() % 10_000) / 10_000
            let nth = 1 + Int(points.next() % 3)
            anywhereSteps.append(ScenarioStep(at: at, action: .crash(target: member, point: point.rawValue, nth: nth),
                                              line: 0, nemesis: "crash-anywhere"))
            anywhereArmed.insert(name + "/" + point.rawValue)
        }
        let listed = world.plannedCrashes.map { crash in
            "\(crash.process)@\(formatSim(world.clock.sim(atWall: world.clock.epochMicros + crash.after)))"
        }
        let armed = anywhereSteps.compactMap { step -> JSONValue? in
            guard case .crash(let target, let point, let nth) = step.action else { return nil }
            return .string("\(target):\(point)#\(nth)@\(formatSim(step.at))")
        }
        emit(.crashPlanned, [("count", .int(crashAnywhere)), ("kills", .array(listed.map { .string($0) })),
                             ("points", .array(armed))])
    }

    /// A process died by itself: at a crash point a `crash` step armed, or where crash-anywhere drew. A pool dies
    /// whole, as its real process does. Crash-anywhere's victims start again a second later; a crash step's wait
    /// for a `restart` step or the heal, as in a real run.
    private func crashed(_ member: String, at point: String) {
        let name = poolOf[member] ?? member
        for other in members(name) where world.isRunning(other) { world.kill(other) }
        var fields: [(String, JSONValue)] = [("target", .string(name)), ("signal", "SIGKILL"),
                                             ("point", .string(point)), ("by", "crash")]
        if name != member { fields.append(("device", .string(member))) }
        emit(.processKilled, fields)
        let byStep = armedCrashes.removeValue(forKey: name) != nil
        let drawn = byStep && anywhereArmed.contains(name + "/" + point)
        if inScenario, (!byStep && point.hasPrefix("anywhere.")) || drawn {
            pendingRestarts.append((name, world.scheduler.now + 1_000_000))
        }
    }

    /// A `kill` or `restart` step for a process whose armed crash points have not fired: they are forgotten (a new
    /// process starts unarmed), and the report says so.
    private func disarmed(_ name: String, by command: String) {
        guard let armed = armedCrashes.removeValue(forKey: name) else { return }
        let points = armed.map { "\($0.point) on \($0.target)" }.joined(separator: ", ")
        notes.append("crash point \(points) had not fired before the \(command) of \(name)")
    }

    /// A simulated run prints no line per step.
    func played(_ step: ScenarioStep, _ fields: [(String, JSONValue)]) {}

    /// A control command for a process (a pooled device directly: its pool would hand it over unchanged), answered
    /// within 5 s of virtual time.
    @discardableResult
    func control(_ name: String, _ command: String, _ args: [String: JSONValue] = [:]) throws -> JSONValue? {
        try control(name, command, args, timeoutMicros: 5_000_000)
    }

    @discardableResult
    private func control(_ name: String, _ command: String, _ args: [String: JSONValue], timeoutMicros: Int64)
        throws -> JSONValue?
    {
        let target = poolOf[name] ?? name
        guard world.isRunning(name), !world.isPaused(name) else { throw LabError.io("\(target) is not running") }
        guard let ack = world.call(name, command, args, timeoutMicros: timeoutMicros) else {
            throw LabError.io("\(name) did not answer \(command) within \(timeoutMicros / 1_000) ms")
        }
        if !ack.ok { throw LabError.io("\(name) refused \(command): \(ack.detail)") }
        return ack.data
    }

    private func via(_ device: String, _ target: String) -> [(String, JSONValue)] {
        device == target ? [] : [("device", .string(device))]
    }

    func network(_ command: String, halves: [[String]]) throws {
        throw LabError.usage("\(command) acts on the network between hosts; the simulation has none (docs/HOSTS.md)")
    }

    func signal(_ device: String, _ command: String) throws {
        let target = poolOf[device] ?? device
        guard order.contains(target) else { throw LabError.io("no process \(target)") }
        if command == "kill" || command == "restart" { disarmed(target, by: command) }
        switch command {
        case "kill":
            guard running(target) else { throw LabError.io("\(target) is not running") }
            for member in members(target) { world.kill(member) }
            emit(.processKilled, [("target", .string(target)), ("signal", "SIGKILL")] + via(device, target))
        case "restart":
            for member in members(target) where world.isRunning(member) { world.kill(member) }
            checkState(of: target)
            try startAndWait(target)
            emit(.processRestarted, [("target", .string(target)), ("pid", .int(pids[target] ?? 0))]
                + via(device, target))
        case "pause":
            for member in members(target) { world.pause(member) }
            emit(.processPaused, [("target", .string(target)), ("signal", "SIGSTOP")])
        case "resume":
            emit(.processResumed, [("target", .string(target)), ("signal", "SIGCONT")])
            for member in members(target) { world.resume(member) }
        default:
            throw LabError.usage("unknown signal command \(command)")
        }
    }

    /// Cursor safety on the databases of a stopped device (or pool), as `LabRun.checkState` on its files.
    func checkState(of target: String) {
        let devices = poolDevices[target] ?? (topology.account(of: target) != nil ? [target] : [])
        let ledgers = devices.compactMap { id in
            topology.account(of: id).flatMap { account in deviceConfigurations[id].map { (id, account,
                $0.databasePath) } }
        }
        for fields in StopChecks.stateChecked(serverPath: serverConfiguration.databasePath, ledgers: ledgers) {
            emit(.stateChecked, fields)
        }
    }

    // MARK: - Heal and quiesce (`TopologyRunner`)

    func resumeToHeal(_ name: String) {
        guard paused(name) else { return }
        emit(.processResumed, [("target", .string(name)), ("signal", "SIGCONT"), ("by", "heal")])
        for member in members(name) { world.resume(member) }
    }

    func isStopped(_ name: String) -> Bool { !running(name) }

    func startAndWait(_ name: String) throws {
        try start(name)
        waitReady(name)
    }

    func serverStats() -> JSONValue? { try? control("server", "stats") }

    func forcedPass(_ device: String) -> JSONValue? {
        try? control(device, "sync", ["force": true], timeoutMicros: 30_000_000)
    }

    /// A pool's `syncAll`, as the simulated devices' own forced passes, posted at once and gathered.
    func forcedPasses(inPool pool: String) -> [(String, JSONValue)] {
        var waiting: [(String, Int)] = []
        for id in poolDevices[pool]! where world.isRunning(id) && !world.isPaused(id) {
            waiting.append((id, world.post(id, "sync", ["force": true])))
        }
        let gatherDeadline = world.scheduler.now + 30_000_000
        // An answer stays until taken: the first one not yet in only moves forward (not a scan per action).
        var answered = 0
        world.scheduler.run(until: gatherDeadline) {
            while answered < waiting.count && world.hasAck(waiting[answered].1) { answered += 1 }
            return answered == waiting.count
        }
        return waiting.compactMap { id, req in
            guard let ack = world.takeAck(req), ack.ok, let data = ack.data else { return nil }
            return (id, data)
        }
    }

    /// As `LabRun`'s, with `heal.timeoutSec` of virtual real time.
    private func quiesce() {
        let deadline = world.scheduler.now + Int64(topology.healTimeoutSec * 1_000_000)
        quiesce(while: { world.scheduler.now < deadline }, pause: { world.run(for: 20_000) })
    }

    /// The server's and broker's own counters beside the events; no memory or CPU figures (they would be this
    /// process's, and real timings would break the byte-identical replay).
    private func collectFinalStats() {
        var stats: [(String, JSONValue)] = [("simulated", true)]
        for name in ["server", "broker"] {
            if let data = try? control(name, "stats") { stats.append((name, data)) }
        }
        stats.append(("pools", .object(poolDevices.keys.sorted().map { ($0, .int(poolDevices[$0]!.count)) })))
        stats.append(("notes", .array(notes.map { .string($0) })))
        folder.write("stats.json", JSONValue.object(stats).description + "\n")
    }

    func say(_ text: String) {
        guard !quiet else { return }
        Output.stderr("synclab sim: \(text)\n")
    }
}
