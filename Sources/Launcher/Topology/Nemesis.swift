import LabKit
import SyncProtocol

/// A topology's `nemesis` block: fault generators (kill, pause, crash, offline, forceQuit, broker chaos windows,
/// server fault windows, network partitions between hosts) with their targets, rates and downtimes, and the limits
/// every fault obeys. `schedule` expands
/// it, from the run's seed, into ordinary scenario steps: the same seed gives the same schedule. Every key and its
/// default: docs/TOPOLOGY.md, "nemesis".
public struct Nemesis: Sendable {
    /// What a generator does to a target, from its start step to its end step.
    public enum Kind: String, CaseIterable, Sendable {
        /// SIGKILL, then `restart` after the downtime.
        case kill
        /// SIGSTOP, then SIGCONT.
        case pause
        /// Arm a crash point (the process dies when it reaches it), then `restart`.
        case crash
        /// A device loses its network, then regains it.
        case offline
        /// The user swipes the app away, then opens it again.
        case forceQuit
        /// A window of broker chaos (global, or for one device), then the topology's own broker settings again.
        case chaos
        /// A window of server faults, then the topology's own server settings again.
        case faults
        /// A real network partition between hosts (iptables, docs/HOSTS.md): two halves of the hosts, or one process
        /// cut from the server or the broker, drawn from the seed; then `heal`. A run on hosts only.
        case partition

        /// Chaos and faults windows change settings, a partition cuts the network: none of them puts a process down.
        var isWindow: Bool { self == .chaos || self == .faults || self == .partition }
        /// Offline and forceQuit act on a device's state, not on its process.
        var isDeviceState: Bool { self == .offline || self == .forceQuit }

        /// The targets `"any"` means for this kind.
        var defaultTargets: [String] {
            switch self {
            case .kill, .pause, .crash, .partition: return ["any"]
            case .offline, .forceQuit: return ["devices"]
            case .chaos: return ["broker"]
            case .faults: return ["server"]
            }
        }
    }

    /// How long a fault lasts (simulated seconds): its end step comes that long after its start.
    public enum Downtime: Sendable, Equatable {
        case constant(Double)
        case uniform(min: Double, max: Double)
        case exponential(mean: Double)

        func draw(_ generator: inout SeededGenerator) -> Double {
            switch self {
            case .constant(let value): return value
            case .uniform(let low, let high): return low + (high - low) * generator.unit()
            case .exponential(let mean): return generator.exponential(mean: mean)
            }
        }
    }

    /// One fault generator.
    public struct Generator: Sendable {
        public var kind: Kind
        /// As written: "any", "server", "broker", "devices", a platform, an account id or a device id.
        public var targets: [String]
        /// Faults per simulated hour (exponential gaps); ignored when `interval` is set.
        public var rate: Double
        /// A fixed gap between faults (simulated seconds), instead of `rate`.
        public var interval: Double?
        public var downtime: Downtime
        /// Crash points to pick from (`crash` only); empty: every point of the target's role.
        public var points: [String]
        /// The settings of a `chaos` or `faults` window, as the control command takes them.
        public var settings: [String: JSONValue]
        public var line: Int

        public init(kind: Kind, targets: [String]? = nil, rate: Double = 6, interval: Double? = nil,
                    downtime: Downtime? = nil, points: [String] = [], settings: [String: JSONValue]? = nil,
                    line: Int = 0) {
            self.kind = kind
            self.targets = targets ?? kind.defaultTargets
            self.rate = rate
            self.interval = interval
            self.downtime = downtime ?? Self.defaultDowntime(kind)
            self.points = points
            self.settings = settings ?? Self.defaultSettings(kind)
            self.line = line
        }

        static func defaultDowntime(_ kind: Kind) -> Downtime {
            switch kind {
            case .kill, .crash, .forceQuit: return .uniform(min: 10, max: 60)
            case .pause: return .uniform(min: 5, max: 30)
            case .offline, .partition: return .uniform(min: 30, max: 300)
            case .chaos, .faults: return .constant(300)
            }
        }

        static func defaultSettings(_ kind: Kind) -> [String: JSONValue] {
            switch kind {
            case .chaos: return ["loss": 0.5, "duplicate": 0.2]
            case .faults: return ["dropReply": 0.3, "dropRequest": 0.2]
            default: return [:]
            }
        }
    }

    public var generators: [Generator]
    /// At most this many targets down (killed, paused, crashed, offline, force-quit) at once.
    public var maxDown = 2
    /// False: the server and the broker are never down at the same time.
    public var serverWithBroker = false
    /// Faults start within [from, until) simulated seconds; `until` nil: the scenario's end.
    public var from = 0.0
    public var until: Double?
    public var line = 0

    public init(generators: [Generator] = []) { self.generators = generators }

    /// The generators `synclab run --nemesis kill,pause,…` adds: one per kind, with every default.
    public static func standard(_ kinds: [Kind]) -> [Generator] { kinds.map { Generator(kind: $0) } }
}
