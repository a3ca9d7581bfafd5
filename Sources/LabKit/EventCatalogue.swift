/// Every type of event a SyncLab process writes to `events.jsonl`, as typed values: the one list the roles' emitters
/// and the launcher's analysis share, and docs/ARCHITECTURE.md's events table lists (`EventCatalogueTests` ties the
/// two). Names and fields never change once a run folder has them: an old folder must still read. Here: the events
/// more than one role writes, and the launcher's; each role's own are in `EventCatalogue+ROLE.swift`.
///
/// The catalogue is the static members of `EventType`, so an emitter writes `EventLine(.opApplied, …)` and the
/// launcher `case EventCatalogue.opApplied:`.
public typealias EventCatalogue = EventType

extension EventType {
    public static let controlReceived = EventType(
        "control.received", [.server, .broker, .device], "command args:o ok:b detail",
        "a control command arrived, and what it was answered")
    public static let crashArmed = EventType(
        "crash.armed", [.server, .broker], "detail",
        "a crashAt command armed or disarmed a crash point")
    public static let faultSet = EventType(
        "fault.set", [.server, .broker], "scope? device? off:b?", open: true,
        "the server's faults or the broker's chaos changed: the new settings")
    public static let helloRefused = EventType(
        "hello.refused", [.device, .server], "code? message? device? account? reason?",
        "the server refused a device's hello")
    public static let nemesisSchedule = EventType(
        "nemesis.schedule", [.launcher], "faults:i skipped:i steps:i byKind:o",
        "the nemesis's seeded schedule of faults")
    public static let scenarioFailed = EventType(
        "scenario.failed", [.launcher], "action target error nemesis?", open: true,
        "a scenario step could not be played: the step's fields and the error")
    public static let quiesceDone = EventType(
        "quiesce.done", [.launcher], "rounds:i",
        "quiesce ended with every op settled and every cursor at its account's head")
    public static let quiesceTimeout = EventType(
        "quiesce.timeout", [.launcher], "rounds:i stuck:a stuckDevices:a",
        "quiesce ran out of time: what was still stuck")
    public static let processSpawned = EventType(
        "process.spawned", [.launcher], "target pid:i",
        "the launcher started a process")
    public static let stateChecked = EventType(
        "state.checked", [.launcher], "target held:b cursor:i detail?",
        "cursor safety on a stopped device's files, read before it starts again")
    public static let authThrottled = EventType(
        "auth.throttled", [.server, .broker], "device peer",
        "a connection or key ran out of wrong-token attempts: further tokens are refused unchecked for a while")
    public static let crashPlanned = EventType(
        "crash.planned", [.launcher], "count:i kills:a points:a",
        "the simulation's crash-anywhere plan: which kills it will make")
    public static let networkPartitioned = EventType(
        "network.partitioned", [.launcher], "halves:a hosts:a",
        "the launcher cut the network between two halves of the hosts (iptables on the hosts, docs/HOSTS.md)")
    public static let networkHealed = EventType(
        "network.healed", [.launcher], "hosts:a",
        "the launcher removed a partition's rules from the hosts")
    public static let phase = EventType(
        "phase", [.launcher], "name",
        "the run entered a phase (scenario, heal, quiesce, check)")
    public static let processCrashing = EventType(
        "process.crashing", [.server, .broker, .device], "point nth:i work:i? pid:i",
        "a process reached an armed crash point and kills itself now")
    public static let processKilled = EventType(
        "process.killed", [.launcher], "target signal point? by?",
        "the launcher killed a process (SIGKILL), or found it dead at a crash point")
    public static let processPaused = EventType(
        "process.paused", [.launcher], "target signal?",
        "the launcher paused a process (SIGSTOP)")
    public static let processRestarted = EventType(
        "process.restarted", [.launcher], "target pid:i? by?",
        "the launcher started a process again on the same database")
    public static let processResumed = EventType(
        "process.resumed", [.launcher], "target signal?",
        "the launcher resumed a paused process (SIGCONT)")
    public static let processStarted = EventType(
        "process.started", [.server, .broker, .device], "role pid:i listen? db? control? notify? notifyMode?",
        open: true,
        "a process started")
    public static let processStopped = EventType(
        "process.stopped", [.server, .broker, .device],
        "role pid:i hints:o? hintBundles:o? pulls:o? hintLink:o? refusalsSuppressed:i?",
        "a process stopped cleanly")
    public static let requestRefused = EventType(
        "request.refused", [.server, .broker, .device], "code message peer? device? suppressed:i?",
        "a message was refused, with the error sent back")
    public static let scenarioAction = EventType(
        "scenario.action", [.launcher], "action target nemesis?", open: true,
        "the launcher played a scenario step")

    /// Every event type, each once.
    public static let all: [EventType] = sharedEvents + serverEvents + brokerEvents + deviceEvents

    static let sharedEvents: [EventType] = [
        scenarioFailed, quiesceDone, quiesceTimeout, processSpawned, stateChecked, crashPlanned,
        authThrottled,
        controlReceived,
        crashArmed,
        faultSet,
        helloRefused,
        nemesisSchedule,
        networkHealed,
        networkPartitioned,
        phase,
        processCrashing,
        processKilled,
        processPaused,
        processRestarted,
        processResumed,
        processStarted,
        processStopped,
        requestRefused,
        scenarioAction,
    ]
}
