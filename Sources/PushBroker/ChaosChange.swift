import SyncProtocol

/// The control command `chaos`, parsed: `{loss, duplicate, delayKind, delaySec, reorder, device?}` changes the named
/// fields (globally, or for one device starting from the global settings); `{"off": true}` clears every setting, or
/// only `device`'s override when one is named.
public enum ChaosChange: Sendable, Equatable {
    case set(device: String?, loss: Double?, duplicate: Double?, delayKind: DelayKind?, delaySec: Double?,
             reorder: Double?)
    case off(device: String?)

    static let keys: Set<String> = ["loss", "duplicate", "delayKind", "delaySec", "reorder", "device", "off"]

    /// Parses control arguments; throws a message that names the bad argument.
    public static func parse(_ args: [String: JSONValue]) throws(BrokerError) -> ChaosChange {
        for key in args.keys.sorted() where !keys.contains(key) {
            throw .invalid("unknown chaos argument \"\(key)\"; known: \(keys.sorted().joined(separator: ", "))")
        }
        var device: String?
        if let value = args["device"] {
            guard let name = value.stringValue, !name.isEmpty else { throw .invalid("device must be a device id") }
            device = name
        }
        if let value = args["off"] {
            guard let off = value.boolValue else { throw .invalid("off must be true or false") }
            if off {
                guard args.keys.allSatisfy({ $0 == "off" || $0 == "device" }) else {
                    throw .invalid("off clears every setting; give no other setting with it")
                }
                return .off(device: device)
            }
        }
        func number(_ key: String) throws(BrokerError) -> Double? {
            guard let value = args[key] else { return nil }
            guard let number = value.doubleValue, number.isFinite else { throw .invalid("\(key) must be a number") }
            return number
        }
        var delayKind: DelayKind?
        if let value = args["delayKind"] {
            guard let text = value.stringValue, let kind = DelayKind(rawValue: text) else {
                let known = DelayKind.allCases.map(\.rawValue).joined(separator: "|")
                throw .invalid("delayKind must be one of \(known)")
            }
            delayKind = kind
        }
        return .set(device: device, loss: try number("loss"), duplicate: try number("duplicate"),
                    delayKind: delayKind, delaySec: try number("delaySec"), reorder: try number("reorder"))
    }

    /// `base` with this change's fields applied (for `.set`).
    func applied(to base: ChaosSettings) -> ChaosSettings {
        guard case .set(_, let loss, let duplicate, let delayKind, let delaySec, let reorder) = self else {
            return .off
        }
        var settings = base
        if let loss { settings.loss = loss }
        if let duplicate { settings.duplicate = duplicate }
        if let delayKind { settings.delayKind = delayKind }
        if let delaySec { settings.delaySec = delaySec }
        if let reorder { settings.reorder = reorder }
        return settings
    }
}
