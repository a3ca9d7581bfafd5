import Foundation
import PushBroker
import SyncDevice
import SyncProtocol
import SyncServer

/// A run's description: the processes, the accounts and devices, the timeline of user actions and faults.
/// Every key and its default is in docs/TOPOLOGY.md.
public struct Topology: Sendable {
    public var name: String
    public var description: String
    public var seed: UInt64
    /// Simulated seconds per real second.
    public var timeScale: Double
    /// Simulated seconds the scenario lasts (heal and quiesce come after).
    public var duration: Double
    public var transport: Transport
    public var security = Security.curve
    /// The server's settings (`server: {…}`, `ServerSettings.knobs`).
    public var server: ServerSettings
    /// The broker's settings (`broker: {…}`, `BrokerSettings.knobs`); how it takes notices follows the server's
    /// (`brokerSettings`).
    public var broker: BrokerSettings
    /// The topology-wide device settings (`device: {…}`); an account's or a device's own `device: {…}` overrides
    /// them in `DeviceSpec.settings`.
    public var device: DeviceSettings
    public var accounts: [AccountSpec]
    public var scenario: [ScenarioStep]
    public var behaviours: [Behaviour]
    /// Real seconds the heal-and-quiesce phase may take before the run is declared stuck.
    public var healTimeoutSec: Double
    /// Which checks the topology predicts will fail, and where (`expect`); nil: every check must hold.
    public var expect: Expectation?
    /// `synclab run --ignore-expect`: the run is judged as if `expect` were absent (recorded in run.json).
    public var expectIgnored = false
    /// Product checks beside the invariants (`checks`).
    public var checks = ProductCheckSettings()
    /// The articles' published figures this run must reproduce (key `reference`, docs/SEEDS.md).
    public var reference: [ReferenceFigure] = []
    /// 0: every device is a process of its own; N: the devices are spread over N pool processes `pool-1`…`pool-N`.
    public var pools = 0
    /// Seeded fault generators whose schedule joins the scenario (`Nemesis.swift`); nil: none.
    public var nemesis: Nemesis?
    /// Which host each process runs on (`hosts`, `host`, `poolHosts`; docs/HOSTS.md); empty: all on `local`.
    public var placement = Placement()

    public var devices: [DeviceSpec] { accounts.flatMap(\.devices) }

    /// The broker's settings as the run starts it: notices arrive the way the server sends them (PUB → SUB or
    /// PUSH → PULL) with the server's high-water mark.
    public var brokerSettings: BrokerSettings {
        var settings = broker
        settings.noticesMode = server.notifyMode == .pub ? .sub : .pull
        settings.noticesHWM = Int32(server.notifyHighWaterMark)
        return settings
    }

    public func account(of device: String) -> String? {
        accounts.first(where: { $0.devices.contains(where: { $0.id == device }) })?.id
    }

    /// Which pool process hosts each device (none when `pools` is 0): round robin in the order the devices are
    /// declared, so every pool gets devices of every account and platform.
    public var poolAssignment: [String: String] {
        guard pools > 0 else { return [:] }
        var assignment: [String: String] = [:]
        for (index, device) in devices.enumerated() { assignment[device.id] = "pool-\(index % pools + 1)" }
        return assignment
    }
}

/// How the run's processes reach each other.
public enum Transport: String, Sendable, CaseIterable {
    /// Unix sockets in a temporary folder.
    case ipc
    /// Free ports on 127.0.0.1.
    case tcp
}

/// Whether the run's sockets are encrypted and authenticated.
public enum Security: String, Sendable, CaseIterable {
    /// Every socket CURVE-encrypted and authenticated with keys made for the run (the default).
    case curve
    /// NULL: plaintext, e.g. to measure what CURVE costs.
    case plaintext = "none"
}

/// The two halves of a `partition` step (none for `heal`), each a list of process or host names.
public final class NetworkCut: Sendable, Equatable {
    public let halves: [[String]]
    public init(_ halves: [[String]]) { self.halves = halves }
    public static func == (a: NetworkCut, b: NetworkCut) -> Bool { a.halves == b.halves }
}

public struct AccountSpec: Sendable {
    public var id: String
    public var devices: [DeviceSpec]
}

public struct DeviceSpec: Sendable {
    public var id: String
    public var platform: Platform
    /// App opens per simulated day.
    public var engagement: Double
    /// The app's state at start.
    public var start: StartState
    public var charging: Bool
    public var token: String
    /// This device's settings: the topology's `device`, then its account's, then its own (each key overrides).
    public var settings: DeviceSettings
    /// An outside device (docs/DEVICE-CONTRACT.md): the program and its arguments the lab side runs; nil: the lab's
    /// own `synclab-device`.
    public var program: [String]? = nil
    /// How long its program may take to say ready and to answer a request (real ms, `programTimeoutMs`).
    public var programTimeoutMs = 10_000
}

/// A user who opens the app `opensPerDay` times a simulated day and writes `editsPerSession` edits each time.
public struct Behaviour: Sendable {
    public var devices: [String]
    public var opensPerDay: Double
    public var editsPerSession: Int
    public var sessionMinutes: Double
    public var drafts: Int
    public var line: Int
    /// Share of a session's edits that delete the draft instead of updating it (only a draft this device has
    /// written before in the run, so most deletes find a live draft; one deleted meanwhile elsewhere is refused).
    public var deleteShare = 0.1
    /// Names the users' draws (`users: "seed000-week"`): two topologies with the same seed and the same name give
    /// each device id the same sessions and edits whatever the settings or the file's layout, so a before/after pair
    /// differs only by its fix. Without it the draws are named by the behaviour's line.
    public var users: String? = nil
}

/// One thing that happens at a simulated time.
public struct ScenarioStep: Sendable {
    public var at: Double
    public var action: ScenarioAction
    public var line: Int
    /// The nemesis kind that generated the step ("kill", or "kill.end" for the step that ends it); nil when the
    /// topology's scenario or a behaviour wrote it.
    public var nemesis: String? = nil
}

public enum ScenarioAction: Sendable, Equatable {
    case edit(device: String, draft: String, action: DraftAction, title: String?, body: String?)
    /// A device-level user or OS action: open, background, forceQuit, close, offline, online, plug, unplug, sync.
    case device(device: String, command: String)
    case engagement(device: String, opensPerDay: Double)
    case refresh(device: String, on: Bool)
    /// kill (SIGKILL), restart, pause (SIGSTOP), resume (SIGCONT) of "server", "broker" or a device id.
    case signal(target: String, command: String)
    /// Broker chaos settings (optionally for one device).
    case chaos(args: [String: JSONValue])
    /// Server fault settings.
    case faults(args: [String: JSONValue])
    /// Arms a crash point (`crashAt`) in "server", "broker" or a device: the process SIGKILLs itself on the `nth`
    /// time it reaches `point` from now.
    case crash(target: String, point: String, nth: Int)
    /// `partition`: a real network partition between two halves (process or host names), with iptables on the
    /// hosts; `heal` (no halves): ends every partition. A run on hosts only (docs/HOSTS.md). The halves are held by
    /// a class: with a `[[String]]` payload in this enum, this toolchain's debug builds read them back corrupted.
    case network(command: String, cut: NetworkCut)

    public var name: String {
        switch self {
        case .edit: return "edit"
        case .device(_, let command): return command
        case .engagement: return "engagement"
        case .refresh: return "refresh"
        case .signal(_, let command): return command
        case .chaos: return "chaos"
        case .faults: return "faults"
        case .crash: return "crash"
        case .network(let command, _): return command
        }
    }
}
