import Foundation
import LabControl
import LabKit
import SyncDevice
import SyncProtocol
import SyncServer
import ZeroMQ

/// One run of a topology: starts every process, plays the timeline, heals and quiesces, stops everything, merges the
/// events. The checks and the report are `RunAnalysis` and `Report`, which read only the run folder.
public final class LabRun: TopologyRunner {
    public let topology: Topology
    public let folder: RunFolder
    let binDirectory: String
    let quiet: Bool
    let clock: SimClock
    let context: Context
    let log: EventLog
    /// Every process of the run by name, and the order they were added in (server, broker, devices, pools).
    private(set) var members: [String: RunMember] = [:]
    private(set) var order: [String] = []
    /// Pooled device → the pool process hosting it (empty when the topology has no `pools`).
    let poolOf: [String: String]
    /// Pool process → its devices, in spec order.
    private(set) var poolDevices: [String: [String]] = [:]
    private let tail = EventTail()
    private var lastProgress = 0.0
    private let progressOnTerminal: Bool
    /// Crash points armed by `crash` steps and not yet fired, by process: the point and the target the step named
    /// (a pooled device's process is its pool).
    var armedCrashes: [String: [(point: String, target: String)]] = [:]
    /// What happened along the way that the report should mention (a step that failed, a quiesce timeout).
    public internal(set) var notes: [String] = []
    /// Each process's CPU seconds when the scenario began (stats.json `cpuSecondsAtScenario`), so the cost of a
    /// run's work can be told from the cost of starting it.
    private var cpuAtScenario: [(String, JSONValue)] = []
    /// … and when it ended (`cpuSecondsAtHeal`), before healing and quiescing poll every process.
    private var cpuAtHeal: [(String, JSONValue)] = []
    /// The hosts the processes run on (nil: all on this machine, docs/HOSTS.md).
    let hosts: HostRun?
    /// The outside devices (`program`, docs/DEVICE-CONTRACT.md), found once: every control call asks.
    lazy var outsideDevices: [String] = topology.devices.filter { $0.program != nil }.map(\.id)

    public init(topology: Topology, topologyText: String, folder: RunFolder, binDirectory: String, quiet: Bool) throws {
        // Before anything is written: every file and folder of the run, and of every process it starts (they
        // inherit it), is its owner's only from creation (docs/SECURITY.md, "Run files").
        umask(0o077)
        self.topology = RunKeys.withSystemTokens(topology)
        self.folder = folder
        self.binDirectory = binDirectory
        self.quiet = quiet
        self.progressOnTerminal = !quiet && isatty(2) != 0
        self.poolOf = topology.poolAssignment
        self.hosts = topology.placement.isLocal
            ? nil : HostRun(placement: topology.placement, folder: folder, poolOf: poolOf)
        // Every host answers before anything is made or started; the binaries go before the clock starts.
        if let hosts {
            try hosts.preflight(topology.processNames)
            let count = hosts.usedHosts(topology.processNames).count
            if !quiet { Output.stderr("synclab: copying the binaries to \(count) hosts…\n") }
            try hosts.shipBinaries(topology.processNames, binDirectory: binDirectory)
            hosts.measureClocks(topology.processNames, phase: "start")
        }
        // The epoch is a moment after start-up, so simulated 0 is when the scenario begins, not when processes spawn
        // (on hosts, 4 s and a quarter of one per process: the run's files are copied and every role starts over
        // ssh; a start that takes longer is noted in the report).
        // Locally, 1 s and 5 ms per pooled device: a pool opens its devices' ledgers, keys and sockets before it
        // answers (10,000 devices in 40 pools took 78 s on two loaded cores; steps due before the start play at once).
        let lead = hosts == nil ? 1_000_000 + Int64(poolOf.count) * 5_000
            : 4_000_000 + Int64(topology.processNames.count) * 250_000
        self.clock = SimClock(epochMicros: SimClock.wallMicros() + lead, scale: topology.timeScale)
        self.context = try Context()
        try folder.create(topologyText: topologyText, topology: self.topology, clock: clock)
        self.log = try EventLog(path: folder.eventsPath(for: "launcher"), process: "launcher", clock: clock)
    }

    // MARK: - The whole run

    /// Runs everything; returns when every process has stopped and `events.jsonl` is written.
    public func run() throws {
        Signals.install()
        log.emit(.processStarted,
            [("role", "launcher"), ("pid", .int(Int(getpid()))), ("topology", .string(topology.name)),
                                     ("seed", .int(Int(topology.seed))), ("timeScale", .double(topology.timeScale))])
        defer {
            stopAll()
            if let hosts {
                hosts.measureClocks(order, phase: "end")
                hosts.finish(order)
                if !hosts.failures.isEmpty, !FileManager.default.fileExists(atPath: folder.path("stats.json")) {
                    folder.write("stats.json", JSONValue.object([("notes", .array((notes + hosts.failures)
                        .map { .string($0) }))]).description + "\n")
                }
            }
            // A run an outside program stopped: the report's notes say which and what it did.
            if let failure = outsideFailure(), !FileManager.default.fileExists(atPath: folder.path("stats.json")) {
                folder.write("stats.json", JSONValue.object([("notes", .array((notes + ["\(failure)"])
                    .map { .string($0) }))]).description + "\n")
            }
            log.emit(.processStopped, [("role", "launcher"), ("pid", .int(Int(getpid())))])
            folder.mergeEvents(corrections: hosts?.corrections(order) ?? [:], clock: clock)
        }
        try startAll()
        cpuAtScenario = cpuSeconds()
        phase("scenario")
        // Started after its simulated 0 (a slow start-up): the first steps play at once, and the report says so.
        if clock.realSeconds(clock.now()) > 0.5 {
            notes.append(String(format: "the scenario began %.1f s (real) after its epoch; steps due before then "
                + "played at once", clock.realSeconds(clock.now())))
        }
        try playTimeline()
        try watchOutside()
        cpuAtHeal = cpuSeconds()
        phase("heal")
        // A process that crashed at its point since the last step is told (and its point forgotten) before the heal.
        watchCrashes()
        // The network first: the heal's control commands and restarts need every host to reach every other.
        if let hosts, !hosts.cut.isEmpty {
            do { try network("heal", halves: []) } catch { notes.append("heal: \(error)") }
        }
        heal()
        phase("quiesce")
        quiesce()
        try watchOutside()
        phase("check")
        collectFinalStats()
    }

    private func phase(_ name: String) {
        log.emit(.phase, [("name", .string(name))])
        say("\(name)…")
    }

    // MARK: - Processes

    private func endpoint(_ name: String) -> String {
        if let hosts { return hosts.endpoint(name) }
        switch topology.transport {
        case .tcp: return "tcp://127.0.0.1:\(freePort())"
        case .ipc: return "ipc://\(folder.socketDirectory)/\(name).sock"
        }
    }

    /// CURVE keys of the run (nil with `security: "none"`): made in `startAll`, in `keys/` of the run folder.
    private var keys: RunKeys?

    /// With CURVE: a key pair for the launcher, server, broker, every device and pool; accounts.json rewritten with
    /// each device's public key and each pool's key with the devices it may speak for (the processes get the key FILE
    /// paths only, docs/SECURITY.md).
    private func makeKeys() throws {
        guard topology.security == .curve else { return }
        var keys = RunKeys(directory: folder.path("keys"))
        for name in ["launcher", "server", "broker"] { try keys.make(name) }
        for device in topology.devices { try keys.make(device.id) }
        for pool in Set(poolOf.values) { try keys.make(pool) }
        self.keys = keys
        try RunKeys.writeAccounts(topology, keys: keys, poolOf: poolOf, to: folder.accountsPath)
    }

    private func startAll() throws {
        try makeKeys()
        let arguments = RunArguments(topology: topology, folder: folder, server: endpoint("server"),
                                     notices: endpoint("notices"), broker: endpoint("broker"),
                                     epochMicros: clock.epochMicros, keys: keys)
        try add("server", executable: "synclab-server", arguments: arguments.serverArguments, with: arguments)
        try add("broker", executable: "synclab-broker", arguments: arguments.brokerArguments, with: arguments)
        // Each pool's spec, in the shape `synclab-device pool --spec` reads (docs/DEVICE.md, "Device pool").
        var pooled: [String: [JSONValue]] = [:]
        for account in topology.accounts {
            for device in account.devices {
                // The token goes in a file of its own (mode 0600), never on a command line.
                let tokenFile = try RunKeys.writeSecret(folder.path("keys/\(device.id).token"), device.token)
                if let pool = poolOf[device.id] {
                    var entry: [(String, JSONValue)] = [
                        ("id", .string(device.id)), ("account", .string(account.id)), ("tokenFile", .string(tokenFile)),
                        ("platform", .string(device.platform.rawValue)), ("db", .string(folder.devicePath(device.id))),
                        ("engagement", .double(device.engagement)), ("startState", .string(device.start.rawValue)),
                        ("charging", .bool(device.charging)),
                        ("flags", .object(arguments.ownFlags(device).map { ($0.flag, .string($0.value)) })),
                    ]
                    if let keys { entry.append(("keyFile", .string(keys.secretFile(device.id)))) }
                    pooled[pool, default: []].append(.object(entry))
                    continue
                }
                // An outside device: the lab side (`synclab-device program`) runs the student's program.
                let outside = device.program.map { ["program", "--program-json", JSONValue.array($0.map { .string($0) })
                    .description, "--program-timeout-ms", String(device.programTimeoutMs)] } ?? []
                try add(device.id, executable: "synclab-device",
                        arguments: outside + arguments.deviceArguments(device, account: account.id,
                            token: ["--token-file", tokenFile]),
                        with: arguments)
            }
        }
        for (pool, devices) in pooled.sorted(by: { a, b in
            a.key.count != b.key.count ? a.key.count < b.key.count : a.key < b.key
        }) {
            let specPath = folder.path("\(pool).json")
            folder.write("\(pool).json", JSONValue.object([("devices", .array(devices))]).description + "\n")
            poolDevices[pool] = devices.compactMap { $0["id"]?.stringValue }
            try add(pool, executable: "synclab-device",
                    arguments: ["pool", "--spec", specPath] + arguments.sharedDeviceArguments, with: arguments)
        }
        try hosts?.ship(processes: order, poolDevices: poolDevices)
        say("starting \(order.count) processes…")
        for name in order {
            try start(name)
        }
        for name in order {
            do {
                let member = try self.member(name)
                try member.control.waitReady(timeout: readyTimeout(name), alive: { member.process.poll() == false })
            } catch {
                throw outsideFailure(name) ?? error
            }
        }
    }

    /// Registers a process: its argv (with the flags every process takes) and a control client for it.
    private func add(_ name: String, executable: String, arguments: [String], with run: RunArguments) throws {
        let control = endpoint("\(name).control")
        let argv = arguments + run.common(name, control: control, events: folder.eventsPath(for: name))
        let process: any LabProcess = hosts?.process(name, executable: executable, arguments: argv)
            ?? RoleProcess(name: name, executable: "\(binDirectory)/\(executable)", arguments: argv,
                           logPath: folder.logPath(for: name))
        let curve = try keys.map { keys in
            guard let launcher = keys.pairs["launcher"], let own = keys.pairs[name] else {
                throw LabError.io("no CURVE key pair for \(name) in \(folder.path("keys"))")
            }
            return (launcher, own.publicKey)
        }
        let client = try ControlClient(context: context, name: name, endpoint: control, curve: curve)
        members[name] = RunMember(process: process, control: client)
        order.append(name)
    }

    /// The process `name` of this run; an error naming it when the run has none (a step that names no process).
    func member(_ name: String) throws -> RunMember {
        guard let member = members[name] else { throw LabError.io("no process \(name) in this run") }
        return member
    }

    func start(_ name: String) throws {
        let process = try member(name).process
        try process.start()
        log.emit(.processSpawned, [("target", .string(name)), ("pid", .int(Int(process.pid)))])
    }

    /// Stops every process: `stop` over control, then SIGTERM, then SIGKILL; reaps them all.
    func stopAll() {
        // Every process is asked at once; their exits, not their acks, say they stopped.
        for name in order.reversed() {
            guard let member = members[name], member.process.running else { continue }
            if member.process.paused { member.process.signal(SIGCONT) }
            (member.process as? RemoteProcess)?.expectEnd()
            member.control.post("stop")
        }
        for name in order.reversed() {
            guard let process = members[name]?.process else { continue }
            if !process.wait(timeout: 3) {
                process.signal(SIGTERM)
                if !process.wait(timeout: 2) {
                    process.killNow()
                    notes.append("\(name) did not stop on request and was killed")
                }
            }
        }
    }

    // MARK: - Scenario

    private func playTimeline() throws {
        let steps = topology.timeline()
        if topology.nemesis != nil {
            let schedule = topology.nemesisSchedule()
            folder.write("nemesis.json5", schedule.fileText(seed: topology.seed))
            log.emit(.nemesisSchedule, schedule.fields)
        }
        say("playing \(steps.count) steps over \(formatSim(topology.duration)) simulated "
            + "(\(formatReal(clock.realSeconds(topology.duration))) real)")
        for step in steps {
            try waitUntil(sim: step.at)
            watchCrashes()
            perform(step)
        }
        try waitUntil(sim: topology.duration)
        clearProgress()
    }

    /// Sleeps until simulated time `sim`, drawing the progress line and watching for Ctrl-C.
    private func waitUntil(sim: Double) throws {
        while true {
            if Signals.stopRequested { throw LabError.interrupted }
            let now = clock.now()
            progress(now: now)
            watchCrashes()
            try hosts?.watch(members.mapValues(\.process))
            try watchOutside()
            if now >= sim { return }
            let realLeft = clock.realSeconds(sim - now)
            usleep(UInt32(max(200, min(realLeft, 0.1) * 1_000_000)))
        }
    }

    func played(_ step: ScenarioStep, _ fields: [(String, JSONValue)]) { say(Self.stepLine(step, fields)) }

    /// A scenario step as the terminal shows it while it plays: `10m00s kill server`, `5h00m open iphone`.
    static func stepLine(_ step: ScenarioStep, _ fields: [(String, JSONValue)]) -> String {
        let value = { (name: String) in fields.first { $0.0 == name }?.1.stringValue }
        var line = "\(formatSim(step.at)) \(step.action.name)"
        if let target = value("target") { line += " \(target)" }
        if let draft = value("draft") { line += " \(draft)" + (value("op").map { " (\($0))" } ?? "") }
        return line
    }

    /// A control command for a process, or for a pooled device through its pool (`args.device` names it).
    @discardableResult
    func control(_ name: String, _ command: String, _ args: [String: JSONValue] = [:]) throws -> JSONValue? {
        let target = processName(name)
        if let failure = outsideFailure(target) { throw failure }
        guard let member = members[target], member.process.running, !member.process.paused else {
            throw LabError.io("\(target) is not running")
        }
        let process = member.process
        var args = args
        if target != name { args["device"] = .string(name) }
        // A process armed to crash may die while it carries the command out: its exit ends the wait.
        let alive: (() -> Bool)? = armedCrashes[target] == nil ? nil : { process.poll() == false }
        let ack = try member.control.call(command, args, alive: alive)
        if !ack.ok { throw LabError.io("\(name) refused \(command): \(ack.detail)") }
        return ack.data
    }

    /// `device`: the pooled device a signal step named, when its pool is the process that got the signal.
    private func via(_ device: String, _ target: String) -> [(String, JSONValue)] {
        device == target ? [] : [("device", .string(device))]
    }

    /// The process that hosts `name`: its pool for a pooled device, else itself.
    func processName(_ name: String) -> String { poolOf[name] ?? name }

    /// Signals a process; a pooled device's target is its whole pool (every device in it dies and restarts with it).
    func signal(_ device: String, _ command: String) throws {
        let target = processName(device)
        let process = try member(target).process
        if command == "kill" || command == "restart" { disarmed(target, by: command) }
        switch command {
        case "kill":
            guard process.running else { throw LabError.io("\(target) is not running") }
            process.killNow()
            log.emit(.processKilled, [("target", .string(target)), ("signal", "SIGKILL")] + via(device, target))
        case "restart":
            if process.running { process.killNow() }
            checkState(of: target)
            try startAndWait(target)
            log.emit(.processRestarted, [("target", .string(target)), ("pid", .int(Int(process.pid)))]
                + via(device, target))
        case "pause":
            process.signal(SIGSTOP)
            log.emit(.processPaused, [("target", .string(target)), ("signal", "SIGSTOP")])
        case "resume":
            process.signal(SIGCONT)
            log.emit(.processResumed, [("target", .string(target)), ("signal", "SIGCONT")])
        default:
            throw LabError.usage("unknown signal command \(command)")
        }
    }

    /// A `partition` or `heal` step: iptables on the hosts (`HostRun`), with its event.
    func network(_ command: String, halves: [[String]]) throws {
        guard let hosts else { throw LabError.usage("\(command) needs processes on hosts (docs/HOSTS.md)") }
        let fields = command == "heal" ? try hosts.heal() : try hosts.partition(halves, processes: order)
        log.emit(command == "heal" ? .networkHealed : .networkPartitioned, fields)
    }

    /// Cursor safety on the files of a stopped device (or of every device of a stopped pool), before it starts
    /// again: its shadow must be the server's changes replayed up to its stored cursor. A check of the durable state
    /// at the moment a kill left it, which a later heal cannot repair away.
    func checkState(of target: String) {
        // The files of a process on a host are there until the run ends (docs/HOSTS.md, "Not supported yet").
        guard hosts == nil else { return }
        let devices = poolDevices[target] ?? (topology.account(of: target) != nil ? [target] : [])
        let ledgers = devices.compactMap { id in topology.account(of: id).map { (id, $0, folder.devicePath(id)) } }
        for fields in StopChecks.stateChecked(serverPath: folder.path("server.sqlite"), ledgers: ledgers) {
            log.emit(.stateChecked, fields)
        }
    }

    // MARK: - Crash points

    /// Notices the processes that killed themselves at an armed crash point: `process.killed` with the point (read
    /// from the `process.crashing` line the process wrote last), so a later `restart` step or heal brings them back.
    private func watchCrashes() {
        for name in armedCrashes.keys.sorted() {
            guard let process = members[name]?.process, process.poll(),
                  let armed = armedCrashes.removeValue(forKey: name)
            else { continue }
            let crashing = lastCrashing(name)
            let point = crashing?.point ?? armed.last!.point
            let target = crashing?.device.flatMap { device in armed.first { $0.target == device }?.target }
                ?? armed.last!.target
            log.emit(.processKilled, [("target", .string(name)), ("signal", "SIGKILL"), ("point", .string(point)),
                                        ("by", "crash")] + via(target, name))
        }
    }

    /// A `kill` or `restart` step for a process whose armed crash points have not fired: they are forgotten (a new
    /// process starts unarmed), and the report says so.
    private func disarmed(_ name: String, by command: String) {
        watchCrashes()
        guard let armed = armedCrashes.removeValue(forKey: name) else { return }
        let points = armed.map { "\($0.point) on \($0.target)" }.joined(separator: ", ")
        notes.append("crash point \(points) had not fired before the \(command) of \(name)")
    }

    /// Saves the broker's and server's own counters beside the events, for the report.
    private func collectFinalStats() {
        var stats: [(String, JSONValue)] = []
        for name in ["server", "broker"] {
            if let ack = try? members[name]?.control.call("stats"), let data = ack.data { stats.append((name, data)) }
        }
        var memory: [(String, JSONValue)] = []
        for name in order {
            if let mb = members[name]?.process.residentMB { memory.append((name, .double((mb * 10).rounded() / 10))) }
        }
        let cpu = cpuSeconds()
        stats.append(("residentMB", .object(memory)))
        var privateMemory: [(String, JSONValue)] = []
        for name in order {
            if let mb = members[name]?.process.privateMB {
                privateMemory.append((name, .double((mb * 10).rounded() / 10)))
            }
        }
        stats.append(("privateMB", .object(privateMemory)))
        var peakMemory: [(String, JSONValue)] = []
        for name in order {
            if let mb = members[name]?.process.peakMB { peakMemory.append((name, .double((mb * 10).rounded() / 10))) }
        }
        stats.append(("peakMB", .object(peakMemory)))
        // The launcher's own, before the verdict reads the run (the report adds what reading it took).
        let launcher = [("residentMB", OwnMemory.mb("VmRSS")), ("peakMB", OwnMemory.mb("VmHWM"))]
        stats.append(("launcherMB", .object(launcher.compactMap { name, mb in
            mb.map { (name, .double(($0 * 10).rounded() / 10)) }
        })))
        stats.append(("cpuSeconds", .object(cpu)))
        stats.append(("cpuSecondsAtScenario", .object(cpuAtScenario)))
        stats.append(("cpuSecondsAtHeal", .object(cpuAtHeal)))
        stats.append(("pools", .object(poolDevices.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value.count)) })))
        notes += outsideProtocolNotes()
        stats.append(("notes", .array(notes.map { .string($0) })))
        folder.write("stats.json", JSONValue.object(stats).description + "\n")
    }

    /// CPU seconds of every running process, by name.
    private func cpuSeconds() -> [(String, JSONValue)] {
        order.compactMap { name in
            guard let process = members[name]?.process, process.running, let seconds = process.cpuSeconds else {
                return nil
            }
            return (name, .double((seconds * 100).rounded() / 100))
        }
    }

    // MARK: - Terminal

    func say(_ text: String) {
        guard !quiet else { return }
        clearProgress()
        Output.stderr("synclab: \(text)\n")
    }

    private func progress(now: Double) {
        guard progressOnTerminal else { return }
        let wall = Date().timeIntervalSince1970
        guard wall - lastProgress >= 0.25 else { return }
        lastProgress = wall
        tail.update(files: folder.eventFiles())
        let line = "  sim \(formatSim(max(0, now))) / \(formatSim(topology.duration))  events \(tail.events)  "
            + "pending ops \(tail.pending)  passes \(tail.passes)  hints delivered \(tail.hintsDelivered)  lost "
                + "\(tail.hintsLost)"
        Output.stderr("\r\u{1B}[2K" + line)
    }

    private func clearProgress() {
        if progressOnTerminal { Output.stderr("\r\u{1B}[2K") }
    }
}

func formatSim(_ seconds: Double) -> String {
    let s = Int(seconds.rounded())
    if s >= 86_400 { return "\(s / 86_400)d\(String(format: "%02d", (s % 86_400) / 3600))h" }
    if s >= 3600 { return "\(s / 3600)h\(String(format: "%02d", (s % 3600) / 60))m" }
    if s >= 60 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
    return "\(s)s"
}

func formatReal(_ seconds: Double) -> String {
    seconds >= 60 ? String(format: "%.1f min", seconds / 60) : String(format: "%.1f s", seconds)
}
