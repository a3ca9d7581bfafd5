import LabKit

/// Why a pass that did not end well is excused by a check that judges passes (open-reaches-head): only what the
/// scenario made impossible, never an error the device should have recovered from (issue 30). Until now every pass
/// that ended in anything but `completed` was excused, so a device that stopped recovering its session was caught only
/// if it was still stuck at the very end.
enum PassExcuse: String, CaseIterable, Sendable {
    /// The device was offline (the scenario's `offline`, the nemesis's), or went offline during the pass.
    case offline
    /// The device's process was killed, force-quit, crashed or stopped during the pass.
    case processDown = "process down"
    /// The platform took the window away (an expired iOS task, a closed tab).
    case platformLimit = "platform limit"
    /// The pass pulled its page limit: it stops by design before the head.
    case pageLimit = "page limit"
    /// The server was killed, paused or restarting between the device's previous pass and this one's end.
    case serverDown = "server down"
    /// A server fault the scenario set (lost replies, lost requests, failed commits, delays, refusals) was on.
    case serverFault = "server fault"
    /// The app was reinstalled (a new install has a new session and an empty ledger).
    case reinstalled
    /// A network partition cut the device's host from the server's (a `partition` step or nemesis, docs/HOSTS.md).
    case partitioned
}

/// The scenario's disturbances on a run's clock (wall µs), read once from the events: when the server was down or
/// faulty, when each device was offline or reinstalled.
struct Disturbances {
    private var serverDown: [(from: Int64, to: Int64)] = []
    private var serverFault: [(from: Int64, to: Int64)] = []
    private var offline: [String: [(from: Int64, to: Int64)]] = [:]
    private var reinstalls: [String: [Int64]] = [:]
    /// Device → when a partition cut its host from the server's.
    private var partitioned: [String: [(from: Int64, to: Int64)]] = [:]

    init(_ data: RunData) {
        let end = Int64.max
        var downSince: Int64?
        // The topology's own `server` faults are on from the start (heal turns them off with a `fault.set`).
        var faultSince: Int64? = data.topology.server.faults != .off ? Int64.min : nil
        var offlineSince: [String: Int64] = [:]
        var cutSince: [String: Int64] = [:]
        for event in data.events {
            switch (event.proc, event.type) {
            case ("launcher", EventCatalogue.networkPartitioned):
                for device in Self.cutFromServer(event, data.topology) where cutSince[device] == nil {
                    cutSince[device] = event.wall
                }
            case ("launcher", EventCatalogue.networkHealed):
                for (device, since) in cutSince { partitioned[device, default: []].append((since, event.wall)) }
                cutSince = [:]
            case ("launcher", EventCatalogue.processKilled), ("launcher", EventCatalogue.processPaused),
                 ("launcher", EventCatalogue.processStopped):
                if event.string("target") == "server", downSince == nil { downSince = event.wall }
            case ("launcher", EventCatalogue.processRestarted), ("launcher", EventCatalogue.processResumed):
                if event.string("target") == "server", let since = downSince {
                    serverDown.append((since, event.wall))
                    downSince = nil
                }
            case ("server", EventCatalogue.faultSet):
                let on = Self.anyFaultOn(event)
                if on, faultSince == nil { faultSince = event.wall }
                if !on, let since = faultSince {
                    serverFault.append((since, event.wall))
                    faultSince = nil
                }
            case (_, EventCatalogue.netOffline):
                if offlineSince[event.proc] == nil { offlineSince[event.proc] = event.wall }
            case (_, EventCatalogue.netOnline):
                if let since = offlineSince.removeValue(forKey: event.proc) {
                    offline[event.proc, default: []].append((since, event.wall))
                }
            case (_, EventCatalogue.appReinstalled):
                reinstalls[event.proc, default: []].append(event.wall)
            default:
                continue
            }
        }
        if let since = downSince { serverDown.append((since, end)) }
        if let since = faultSince { serverFault.append((since, end)) }
        for (device, since) in offlineSince { offline[device, default: []].append((since, end)) }
        for (device, since) in cutSince { partitioned[device, default: []].append((since, end)) }
    }

    /// The devices a `network.partitioned` event cut from the server: those whose host is in the other half.
    private static func cutFromServer(_ event: Event, _ topology: Topology) -> [String] {
        let halves = (event["hosts"]?.arrayValue ?? []).map { Set(($0.arrayValue ?? []).compactMap(\.stringValue)) }
        let placement = topology.placement
        let pools = topology.poolAssignment
        guard halves.count == 2, let server = halves.firstIndex(where: { $0.contains(placement.host(of: "server")) })
        else { return [] }
        let other = halves[1 - server]
        return topology.devices.map(\.id).filter { other.contains(placement.host(of: pools[$0] ?? $0)) }
    }

    /// Whether a `fault.set` leaves any fault on: a non-zero number or a true flag among its fields.
    private static func anyFaultOn(_ event: Event) -> Bool {
        guard case .object(let fields) = event.fields else { return false }
        return fields.contains { key, value in
            guard !["off", "wall", "sim", "proc", "type"].contains(key) else { return false }
            if let number = value.doubleValue { return number != 0 }
            return value.boolValue == true
        }
    }

    /// Why pass `end` of `device` (which began at `start`, the device's previous pass having ended at `since`) did
    /// not end well, or nil when the scenario gave it no reason to fail.
    func excuse(device: String, outcome: String, cutOff: Bool, bounded: Bool, start: Int64, since: Int64,
                end: Int64) -> PassExcuse? {
        if bounded { return .pageLimit }
        if cutOff || outcome == "cutOff" { return .platformLimit }
        switch outcome {
        case "completed": return nil
        case "offline": return .offline
        case "killed", "stopped", "interrupted": return .processDown
        default: break
        }
        func overlaps(_ spans: [(from: Int64, to: Int64)], _ from: Int64) -> Bool {
            spans.contains { $0.from <= end && $0.to >= from }
        }
        if overlaps(offline[device] ?? [], since) { return .offline }
        if overlaps(serverDown, since) { return .serverDown }
        if overlaps(serverFault, start) { return .serverFault }
        if (reinstalls[device] ?? []).contains(where: { $0 >= since && $0 <= end }) { return .reinstalled }
        if overlaps(partitioned[device] ?? [], since) { return .partitioned }
        return nil
    }
}
