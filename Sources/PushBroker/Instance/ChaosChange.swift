import LabKit
import SyncProtocol

/// The control command `chaos`, parsed: the broker's runtime knobs (`BrokerSettings.knobs` marked `.atRuntime`:
/// loss, duplicate, delayKind, delaySec, reorder) and `device?` change the named settings (globally, or for one
/// device starting from the global settings); `{"off": true}` clears every setting, or only `device`'s override
/// when one is named. Every value is checked by its knob, with the same range as the broker's flag and the
/// topology's key.
public enum ChaosChange: Sendable, Equatable {
    /// The runtime knobs named, as their control arguments (already checked).
    case set(device: String?, args: [String: JSONValue])
    case off(device: String?)

    /// Parses control arguments; throws a message that names the bad argument.
    public static func parse(_ args: [String: JSONValue]) throws(BrokerError) -> ChaosChange {
        do {
            try BrokerSettings.checkRuntimeNames(args, others: ["device", "off"])
        } catch {
            let known = (BrokerSettings.runtimeKeys + ["device", "off"]).sorted().joined(separator: ", ")
            throw .invalid("unknown chaos argument \"\(error.key ?? "")\"; known: \(known)")
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
        var settings = args
        settings["device"] = nil
        settings["off"] = nil
        // Checked now, so that a bad value is refused before anything changes.
        _ = try ChaosChange.set(device: device, args: settings).applied(to: .off)
        return .set(device: device, args: settings)
    }

    /// `base` with this change's settings applied (for `.set`).
    func applied(to base: ChaosSettings) throws(BrokerError) -> ChaosSettings {
        guard case .set(_, let args) = self else { return .off }
        var settings = BrokerSettings()
        settings.chaos = base
        do {
            try settings.applyRuntime(args)
        } catch {
            throw .invalid("\(error.key ?? "chaos") \(error.problem)")
        }
        return settings.chaos
    }
}
