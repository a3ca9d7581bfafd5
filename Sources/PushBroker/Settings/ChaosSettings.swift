import LabKit
import SyncProtocol

/// Faults the broker injects on top of any profile, globally or for one device.
public struct ChaosSettings: Sendable, Equatable {
    /// Probability a hint is lost before the profile sees it (`hint.dropped`, reason `chaos-loss`).
    public var loss: Double = 0
    /// Probability a delivered hint is sent a second time (`hint.duplicated`).
    public var duplicate: Double = 0
    public var delayKind: DelayKind = .none
    public var delaySec: Double = 0
    /// Probability a hint is held back until the device's next hint has gone ahead of it.
    public var reorder: Double = 0

    /// No faults.
    public static let off = ChaosSettings()

    public var isOff: Bool { loss == 0 && duplicate == 0 && reorder == 0 && drawsNoDelay }

    private var drawsNoDelay: Bool { delayKind == .none || delaySec == 0 }

    /// A delay draw from `generator`; draws nothing when there is no delay, so turning delays on for one device does
    /// not shift the random stream of a run without them.
    public func drawDelay(_ generator: inout SeededGenerator) -> Double {
        switch delayKind {
        case .none: return 0
        case .constant: return delaySec
        case .uniform: return delaySec > 0 ? generator.unit() * 2 * delaySec : 0
        case .exponential: return delaySec > 0 ? generator.exponential(mean: delaySec) : 0
        }
    }

    /// The settings as event fields and control data: the broker's runtime knobs, in table order.
    public var fields: [(String, JSONValue)] {
        var settings = BrokerSettings()
        settings.chaos = self
        return settings.runtimeFields
    }
}
