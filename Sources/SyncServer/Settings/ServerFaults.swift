import LabKit
import SyncProtocol

/// The server's fault knobs. A value with no IO and no randomness of its own: each draw takes the seeded generator
/// it is handed, and a knob at zero draws nothing, so turning one fault on does not shift the others' sequence.
public struct ServerFaults: Sendable, Equatable {
    /// Probability that a push's reply is dropped after its commit: the device sees an unknown outcome.
    public var dropReply: Double = 0
    /// Probability that a push is answered `retryLater` for every op, nothing applied.
    public var transient: Double = 0
    /// Probability that each new op of a push is `rejected("injected")`, permanently.
    public var reject: Double = 0
    /// Every reply to a device waits this long (other clients are served meanwhile).
    public var replyDelayMs: Int = 0
    /// Probability that a push's commit fails after its ops were decided (a full disk, an I/O error): nothing is
    /// applied and the device is told `internal`, unless the reply already left (`replyBeforeCommit`).
    public var failCommit: Double = 0
    /// Probability that a push is dropped before its commit: nothing applied, no reply. The device sees an unknown
    /// outcome the server did NOT apply, which only a resend with the same key settles.
    public var dropRequest: Double = 0
    /// Every page of a pull waits this long before it is sent (the page is read at once; a slow read as the device
    /// sees it), on top of `replyDelayMs`.
    public var slowPullMs: Int = 0

    /// The reason an injected rejection carries.
    public static let injectedReason = "injected"

    /// No faults.
    public static let off = ServerFaults()

    /// The argument names of the control command `faults`: the runtime knobs of `ServerSettings.knobs`, and `off`.
    public static var argumentNames: [String] { ServerSettings.runtimeKeys + ["off"] }

    /// These settings changed by the arguments of the control command `faults`: each runtime knob of the server's
    /// table (ServerSettings+Knobs.swift), optional (a missing one keeps its value) and checked by that knob (the
    /// same range as the server's flag and the topology's key), or `{"off": true}` to reset all first.
    public func updated(with args: [String: JSONValue]) throws(ServerError) -> ServerFaults {
        var settings = ServerSettings()
        settings.faults = self
        do throws(KnobError) {
            try ServerSettings.checkRuntimeNames(args, others: ["off"])
            if let off = args["off"] {
                guard let on = off.boolValue else { throw KnobError(problem: "must be true or false", key: "off") }
                if on { settings.faults = .off }
            }
            try settings.applyRuntime(args)
        } catch {
            throw .invalidArgument(command: "faults", name: error.key ?? "", problem: error.problem)
        }
        return settings.faults
    }

    /// The settings as event fields and control data: the runtime knobs, in table order.
    public var fields: [(String, JSONValue)] {
        var settings = ServerSettings()
        settings.faults = self
        return settings.runtimeFields
    }

    // MARK: - Draws

    /// Whether this push is dropped unread, before anything is applied (drawn first: at zero it draws nothing).
    public func drawDropRequest(using generator: inout SeededGenerator) -> Bool {
        dropRequest > 0 && generator.chance(dropRequest)
    }

    /// Whether this push is answered `retryLater` as a whole.
    public func drawTransient(using generator: inout SeededGenerator) -> Bool {
        generator.chance(transient)
    }

    /// The indices of the ops of a push of `count` ops to refuse.
    public func drawRejections(count: Int, using generator: inout SeededGenerator) -> Set<Int> {
        guard reject > 0 else { return [] }
        var picked: Set<Int> = []
        for index in 0..<count where generator.chance(reject) { picked.insert(index) }
        return picked
    }

    /// Whether this push's commit fails.
    public func drawFailCommit(using generator: inout SeededGenerator) -> Bool {
        generator.chance(failCommit)
    }

    /// Whether the reply of a committed push is dropped.
    public func drawDropReply(using generator: inout SeededGenerator) -> Bool {
        generator.chance(dropReply)
    }
}
