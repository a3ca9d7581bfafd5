import Foundation
import LabKit
import PushBroker
import SyncProtocol
import SyncServer

/// What the report's timeline draws, computed from a run's events alone: lanes (one per process), bands (app state,
/// offline, doze, process down or paused, faults on, the heal and quiesce phases), marks and links (each edit's
/// lineage, each hint's fate), passes, and each device's cursor against its account's head. Pure: no IO, no SVG;
/// `Timeline` draws it.
struct TimelineModel {
    /// A device as the topology declares it.
    struct DeviceInfo {
        let id: String
        let account: String
        let platform: String
        /// The app state it starts in (`foreground`, `background`, …).
        let start: String
        /// The process that hosts it: itself, or its pool.
        var host: String
        /// Plugged in at start.
        var charging = false
    }

    enum LaneKind: Equatable {
        case server, broker
        case device(platform: String)
        case aggregate(platform: String)
    }

    struct Lane: Equatable {
        let id: String
        let label: String
        let kind: LaneKind
        /// Devices summed in an aggregate lane.
        var members: [String] = []
    }

    enum BandKind: String, CaseIterable {
        case foreground, background, closed, forceQuit, offline, doze, charging, window, down, paused, fault, startup
        case heal, quiesce
        /// A network partition between hosts (`network.partitioned` to `network.healed`), over every lane.
        case partition
    }

    /// A span of time on one lane, or on every lane (`lane == nil`: a phase).
    struct Band: Equatable {
        let lane: String?
        let kind: BandKind
        let start: Double
        let end: Double
        let label: String
    }

    enum MarkKind: String {
        case saved, sent, applied, hintAccepted, hintDelivered, hintDied, hintDuplicated, hintReceived, hintIgnored
        case changeApplied, step, unknownOutcome, needsAttention
        /// An event a design switch or a platform limit emitted (`SwitchEvents`): the cause of a broken half.
        case switchEvent
    }

    /// A moment on a lane. `keys` names what it belongs to (op key, hint id, draft, device), for highlighting.
    struct Mark: Equatable {
        let lane: String
        let sim: Double
        let kind: MarkKind
        let label: String
        var keys: [String]
        var reason: String?
    }

    enum LinkKind: String {
        /// `repair`: from where a hint died (or was ignored) to the later apply of its edit on that device.
        case send, notice, hint, pull, repair
    }

    /// An arrow from one lane and moment to another: an op sent, a notice, a hint delivered, a change pulled.
    struct Link: Equatable {
        let fromLane: String
        let fromSim: Double
        let toLane: String
        let toSim: Double
        let kind: LinkKind
        let label: String
        var keys: [String]
    }

    struct Pass: Equatable {
        let lane: String
        let start: Double
        let end: Double
        let trigger: String
        let cutOff: Bool
    }

    /// A device's cursor and its account's head, as steps over time.
    struct CursorLine {
        let lane: String
        var cursor: [(sim: Double, value: Int)]
        var head: [(sim: Double, value: Int)]
    }

    /// Passes of an aggregate lane's devices, summed per bucket of `bucketSec`.
    struct Aggregate {
        let lane: String
        let bucketSec: Double
        var passes: [Int]
        var offline: [Int]
    }

    var start = 0.0
    var end = 0.0
    var lanes: [Lane] = []
    var bands: [Band] = []
    var marks: [Mark] = []
    var links: [Link] = []
    var passes: [Pass] = []
    var cursors: [CursorLine] = []
    var aggregates: [Aggregate] = []
    /// Each iOS lane's background budget factor over time, from `budget.shrunk`/`budget.recovered` (absent: 1).
    var budgets: [String: [(sim: Double, value: Double)]] = [:]
    /// What the page must say about what was left out (devices summed, edits sampled).
    var rules: [String] = []
    /// Keys (op keys, hint ids, devices, drafts) to highlight: the failing invariants' counter-examples.
    var focus: Set<String> = []

    static let serverLane = "server"
    static let brokerLane = "broker"

    /// - Parameters:
    ///   - maxDevices: device lanes drawn one by one (the busiest); the rest are summed per platform.
    ///   - maxEdits: edits whose lineage is drawn; beyond, every k-th edit is.
    ///   - serverFlags: the server's faults from its flags (on from its start, and again after each restart).
    init(
        events: [Event], devices: [DeviceInfo], focus: Set<String> = [], maxDevices: Int = 12, maxEdits: Int = 400,
        serverFlags: String? = nil
    ) {
        self.focus = focus
        let deviceByID = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        end = max(events.map(\.sim).max() ?? 0, 0)
        start = 0

        // Lanes: server, broker, the busiest devices (and every device named in the focus), the rest per platform.
        var activity: [String: Int] = [:]
        for event in events where deviceByID[event.proc] != nil { activity[event.proc, default: 0] += 1 }
        let ranked = devices.sorted {
            let a = activity[$0.id] ?? 0
            let b = activity[$1.id] ?? 0
            return a != b ? a > b : $0.id < $1.id
        }
        var shown = Set(ranked.prefix(maxDevices).map(\.id))
        for device in devices where focus.contains(device.id) { shown.insert(device.id) }
        lanes = [
            Lane(id: Self.serverLane, label: "server", kind: .server),
            Lane(id: Self.brokerLane, label: "broker", kind: .broker),
        ]
        for device in devices where shown.contains(device.id) {
            lanes.append(
                Lane(
                    id: device.id, label: "\(device.id) (\(device.platform))",
                    kind: .device(platform: device.platform)))
        }
        let hidden = devices.filter { !shown.contains($0.id) }
        var aggregateOf: [String: String] = [:]
        for platform in ["android", "ios", "web"] {
            let members = hidden.filter { $0.platform == platform }.map(\.id)
            guard !members.isEmpty else { continue }
            let id = "all-\(platform)"
            lanes.append(
                Lane(
                    id: id, label: "\(members.count) more \(platform)", kind: .aggregate(platform: platform),
                    members: members))
            for member in members { aggregateOf[member] = id }
        }
        if !hidden.isEmpty {
            rules.append(
                "The \(shown.count) busiest devices (most events) have a lane each; the other \(hidden.count) "
                    + "are summed in one lane per platform: passes per time bucket, and how many were offline.")
        }
        let laneSet = Set(lanes.map(\.id))

        // Edits whose lineage is drawn.
        let savedKeys = events.filter {
            $0.type == EventCatalogue.opSaved.name && deviceByID[$0.proc] != nil
        }.compactMap {
            $0.string("key")
        }
        let stride = max(1, Int((Double(savedKeys.count) / Double(max(maxEdits, 1))).rounded(.up)))
        var drawn = Set<String>()
        for (index, key) in savedKeys.enumerated() where index % stride == 0 || focus.contains(key) {
            drawn.insert(key)
        }
        if stride > 1 {
            rules.append(
                "\(savedKeys.count) edits: the lineage of every \(stride)th (and of every highlighted one) is "
                    + "drawn; hints that died are all marked on the lanes drawn.")
        }

        var builder = Builder(
            model: self, deviceByID: deviceByID, laneSet: laneSet, aggregateOf: aggregateOf,
            drawn: drawn, serverFlags: serverFlags)
        for event in events { builder.add(event) }
        builder.finish()
        self = builder.model
        marks += Self.switchMarks(events: events, devices: Set(devices.map(\.id)), lanes: laneSet)
        budgets = Self.budgetSteps(events: events, lanes: laneSet)
    }

    /// Bands, marks and links of one lane.
    func bands(on lane: String) -> [Band] { bands.filter { $0.lane == lane } }
    func marks(on lane: String) -> [Mark] { marks.filter { $0.lane == lane } }

    /// Is anything of this mark or link in the focus? A device in the focus marks its lane, not every mark that
    /// names it.
    func focused(_ keys: [String]) -> Bool {
        keys.contains { key in focus.contains(key) && !lanes.contains { $0.id == key } }
    }
}
