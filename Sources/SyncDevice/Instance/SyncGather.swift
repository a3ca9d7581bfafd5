import LabKit
import SyncProtocol

/// A pool's `syncAll` in progress: a forced pass was requested on every device; the answer goes out when each
/// pass has ended (or the device stopped), or at the deadline with the devices still waiting listed as `missing`.
struct SyncGather {
    let peer: [UInt8]
    let req: Int
    /// Monotonic ns after which the answer goes out with what it has.
    let deadline: UInt64
    /// true: each device's whole `status` data; false: only what quiescing needs (pending, cursor).
    let full: Bool
    var waiting: Set<String>
    var statuses: [String: JSONValue] = [:]
    var missing: [String] = []

    var isDone: Bool { waiting.isEmpty }

    mutating func add(_ device: String, _ status: JSONValue) {
        guard waiting.remove(device) != nil else { return }
        statuses[device] = full ? status : Self.compact(status)
    }

    /// The device stopped before its pass ended.
    mutating func drop(_ device: String) {
        if waiting.remove(device) != nil { missing.append(device) }
    }

    /// The controlAck: every device's status, in spec order, and those that did not answer.
    func ack(order: [String]) -> ControlAck {
        let missed = missing + order.filter { waiting.contains($0) }
        let devices = order.compactMap { id in statuses[id].map { (id, $0) } }
        return ControlAck(req: req, ok: true, detail: "\(devices.count) passes ended, \(missed.count) missing",
                          data: .object([("devices", .object(devices)),
                              ("missing", .array(missed.map { .string($0) }))]))
    }

    /// The fields a launcher needs to decide whether the lab is quiet; keeps a 1,000-device answer small.
    static func compact(_ status: JSONValue) -> JSONValue {
        .object(["pending", "cursor", "online", "app"].compactMap { key in status[key].map { (key, $0) } })
    }
}
