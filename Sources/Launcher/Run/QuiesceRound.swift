import SyncProtocol

/// One round of quiesce, judged from the server's heads and each device's answer to its forced pass: settled when
/// every device answered with no pending op and its cursor at its account's head. Shared by `LabRun` and `SimRun`,
/// which differ only in how they ask.
struct QuiesceRound: Equatable {
    struct DeviceState: Equatable {
        let pending: Int
        let cursor: Int
    }

    /// The devices that answered this round.
    let states: [String: DeviceState]
    let heads: [String: Int]
    let settled: Bool

    /// A round before any was played: nothing answered.
    static let none = QuiesceRound(topology: nil, heads: [:], statuses: [:])

    /// `statuses`: each device's `sync` (or `syncAll`) answer, with `pending` and `cursor`.
    init(topology: Topology?, heads: [String: Int], statuses: [String: JSONValue]) {
        var states: [String: DeviceState] = [:]
        var settled = topology != nil
        // Account by account: each device's head without a search of the accounts per device.
        for account in topology?.accounts ?? [] {
            for device in account.devices {
                guard let data = statuses[device.id] else {
                    settled = false
                    continue
                }
                let state = DeviceState(pending: data["pending"]?.intValue ?? -1,
                                        cursor: data["cursor"]?.intValue ?? -1)
                states[device.id] = state
                if state.pending != 0 || state.cursor != (heads[account.id] ?? 0) { settled = false }
            }
        }
        self.states = states
        self.heads = heads
        self.settled = settled
    }

    /// Quiet: settled, and a whole round changed nothing since `previous`.
    func isQuiet(after previous: QuiesceRound) -> Bool { settled && states == previous.states }

    /// What was still unsettled: a device that did not answer, or one with pending ops or a cursor short of its head.
    func stuck(in topology: Topology) -> [(device: String, text: String)] {
        topology.accounts.flatMap { account in
            account.devices.compactMap { device in
                guard let state = states[device.id] else { return (device.id, "\(device.id) did not answer") }
                let head = heads[account.id] ?? 0
                guard state.pending != 0 || state.cursor != head else { return nil }
                return (device.id, "\(device.id): \(state.pending) pending ops, cursor \(state.cursor) of \(head)")
            }
        }
    }

    /// The `quiesce.timeout` event's fields.
    func timeoutFields(rounds: Int, in topology: Topology) -> [(String, JSONValue)] {
        let stuck = stuck(in: topology)
        return [("rounds", .int(rounds)), ("stuck", .array(stuck.map { .string($0.text) })),
                ("stuckDevices", .array(stuck.map { .string($0.device) }))]
    }
}
