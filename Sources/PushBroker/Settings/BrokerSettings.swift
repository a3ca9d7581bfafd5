import LabKit

/// The broker's settings that a topology gives (`broker: {…}`) and its command line carries: how notices arrive,
/// the high-water marks, the delivery profiles, chaos and the design switch. Each default is written once, here or
/// in `ProfileSettings` and `ChaosSettings`; `BrokerSettings.knobs` (BrokerSettings+Knobs.swift) is how topologies
/// and command lines name them.
public struct BrokerSettings: Sendable, Equatable {
    /// How the server's notices arrive.
    public enum NoticesMode: String, Sendable, CaseIterable {
        /// PUSH → PULL: nothing is lost between server and broker; a full pipe makes the server wait.
        case pull
        /// PUB → SUB: ZeroMQ drops notices past the high-water mark and before the subscription is up (natural loss).
        case sub
    }

    public var noticesMode: NoticesMode = .pull
    /// Receive high-water mark of the notices socket, in messages.
    public var noticesHWM: Int32 = 1000
    /// Send high-water mark of the device ROUTER, per device, in messages; a hint past it is dropped (`hwm`).
    public var hintHWM: Int32 = 1000
    public var profiles = ProfileSettings()
    public var chaos = ChaosSettings.off
    /// Simulated seconds a reordered hint waits at most.
    public var reorderWindowSec: Double = 60
    /// Design switch (issue 13): hints carry the notice's change data (`changes: [{seq, draft, version}]`) instead
    /// of only `{hint, account, head}`. Off is the lab's design: "push is a hint" (seed 001).
    public var hintCarriesData = false
    /// The accounts `hintCarriesData` applies to; nil: all.
    public var hintDataAccounts: Set<String>?

    public init() {}
}
