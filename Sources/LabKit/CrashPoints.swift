import Foundation
import SyncProtocol

/// A named moment between two directives a role's shell carries out, where `--crash-at` or the control command
/// `crashAt` can make the process SIGKILL itself (docs/TOPOLOGY.md, "Crash points"). Each is reached by one call in
/// the shell; what is durable at that moment is what the point's line says.
public enum CrashPoint: String, CaseIterable, Sendable {
    /// An edit's op and replica row are committed; nothing else has happened (no pass, no ack to the caller).
    case deviceAfterLedgerWrite = "device.after-ledger-write"
    /// A batch is claimed (leases written and committed); nothing is sent yet.
    case deviceAfterClaim = "device.after-claim"
    /// A push left for the server; its reply has not been read.
    case deviceAfterSendBeforeReply = "device.after-send-before-reply"
    /// The outcomes of a push's reply are recorded in the ledger; the pass goes on from there.
    case deviceAfterOutcomeRecord = "device.after-outcome-record"
    /// The page's changes are applied to the shadow and the replica, but the cursor's commit is still to come
    /// (today the page and its cursor are one transaction, so this is just before it).
    case deviceBeforeCursorCommit = "device.before-cursor-commit"
    /// A pulled page and its cursor are committed.
    case deviceAfterPageCommit = "device.after-page-commit"
    /// A push is committed to the server's database; neither its notice nor its reply has left.
    case serverAfterCommitBeforeReply = "server.after-commit-before-reply"
    /// A push's head-moved notice went to the broker; its reply to the device has not left yet.
    case serverAfterNotice = "server.after-notice"
    /// A push's reply left for the device (the notice went before it): the last step of a push.
    case serverAfterReply = "server.after-reply"
    /// A hint was accepted for a device (counted, logged); it is not sent yet.
    case brokerAfterAcceptBeforeDeliver = "broker.after-accept-before-deliver"
    /// A hint was handed to libzmq for its device.
    case brokerAfterDeliver = "broker.after-deliver"

    /// "device", "server" or "broker": the process kind that reaches it.
    public var role: String { String(rawValue.prefix(while: { $0 != "." })) }

    /// One line on what is durable when the process dies there, for `--help` and docs/TOPOLOGY.md.
    public var summary: String {
        switch self {
        case .deviceAfterLedgerWrite: return "edit saved (op + replica committed), nothing else done"
        case .deviceAfterClaim: return "batch claimed and its leases committed, nothing sent"
        case .deviceAfterSendBeforeReply: return "push sent, its reply not read (ops in flight)"
        case .deviceAfterOutcomeRecord: return "a push's outcomes recorded in the ledger"
        case .deviceBeforeCursorCommit: return "a page about to be applied, its cursor not committed"
        case .deviceAfterPageCommit: return "a page and its cursor committed"
        case .serverAfterCommitBeforeReply: return "push committed, no notice and no reply sent"
        case .serverAfterNotice: return "push committed and noticed to the broker, no reply sent"
        case .serverAfterReply: return "push committed, noticed and answered"
        case .brokerAfterAcceptBeforeDeliver: return "hint accepted, not yet sent to its device"
        case .brokerAfterDeliver: return "hint handed to libzmq for its device"
        }
    }

    /// The points a role reaches.
    public static func of(role: String) -> [CrashPoint] { allCases.filter { $0.role == role } }

    /// `--help` text: one line per point of `role`.
    public static func helpText(role: String) -> String {
        of(role: role).map { "  \($0.rawValue): \($0.summary)" }.joined(separator: "\n")
    }
}

/// The crash points armed in one process: each with the occurrence to die at, counted from its arming. A value
/// with no IO; `CrashPoints.die` is the one thing that acts.
public struct CrashPoints: Sendable, Equatable {
    /// For each armed point: the occurrence that fires and how many have been reached since it was armed.
    public private(set) var armed: [CrashPoint: (nth: Int, seen: Int)] = [:]

    public init() {}

    public static func == (lhs: CrashPoints, rhs: CrashPoints) -> Bool {
        lhs.armed.keys == rhs.armed.keys && lhs.armed.allSatisfy { rhs.armed[$0.key]! == $0.value }
    }

    /// Arms `point` to fire on its `nth` occurrence from now (re-arming restarts the count).
    public mutating func arm(_ point: CrashPoint, nth: Int = 1) {
        armed[point] = (max(1, nth), 0)
    }

    /// Counts one occurrence of `point` that has `work` in flight (ops claimed or recorded, changes in a page, ops
    /// applied; 1 where the point always has some); returns the occurrence number when this one must kill the
    /// process. An occurrence with nothing in flight (an empty claim, an empty page) is not counted: a crash there
    /// tests nothing, and an armed point waits for the first occurrence that does (issue 30).
    public mutating func reach(_ point: CrashPoint, work: Int = 1) -> Int? {
        guard work > 0, var entry = armed[point] else { return nil }
        entry.seen += 1
        armed[point] = entry
        return entry.seen == entry.nth ? entry.nth : nil
    }

    /// Reads `POINT[@N]` items separated by commas (a `--crash-at` value); every point must be one `role` reaches.
    /// A pool's items are `DEVICE:POINT[@N]`: `device` is the part before the colon, nil without one.
    public static func parse(_ text: String, role: String) throws -> [ArmedCrash] {
        var out: [ArmedCrash] = []
        for rawItem in text.split(separator: ",", omittingEmptySubsequences: true) {
            var item = rawItem.trimmingCharacters(in: .whitespaces)
            var device: String?
            if let colon = item.firstIndex(of: ":") {
                device = String(item[..<colon])
                item = String(item[item.index(after: colon)...])
            }
            var nth = 1
            if let at = item.firstIndex(of: "@") {
                let count = String(item[item.index(after: at)...])
                guard let n = Int(count), n >= 1 else {
                    throw LabError.usage("--crash-at \(rawItem): the occurrence after @ must be a whole number ≥ 1")
                }
                nth = n
                item = String(item[..<at])
            }
            out.append(ArmedCrash(device: device, point: try point(named: item, role: role), nth: nth))
        }
        return out
    }

    /// The point called `name`, which `role` must reach; the error lists the points it does.
    public static func point(named name: String, role: String) throws -> CrashPoint {
        guard let point = CrashPoint(rawValue: name), point.role == role else {
            let known = CrashPoint.of(role: role).map(\.rawValue).joined(separator: ", ")
            throw LabError.usage("unknown crash point \"\(name)\" for a \(role): use one of \(known)")
        }
        return point
    }

    /// Carries out the control command `crashAt`: `{point, nth?}` arms `point` (nth ≥ 1, default 1), `{off: true}`
    /// disarms every point. Returns the ack's detail; throws a usage error naming the bad argument.
    public mutating func control(_ args: [String: JSONValue], role: String) throws -> String {
        if args["off"] != nil {
            guard args.count == 1, args["off"]?.boolValue == true else {
                throw LabError.usage("crashAt: \"off\" must be true and alone")
            }
            armed.removeAll()
            return "every crash point disarmed"
        }
        let (point, nth) = try Self.arguments(args, role: role)
        arm(point, nth: nth)
        return "armed \(point.rawValue) @\(nth)"
    }

    /// The arguments of the control command `crashAt`: `{point, nth?}` (nth ≥ 1, default 1).
    public static func arguments(_ args: [String: JSONValue], role: String) throws -> (CrashPoint, Int) {
        for name in args.keys.sorted() where !["point", "nth"].contains(name) {
            throw LabError.usage("crashAt: unknown argument \"\(name)\": use point, nth (or off alone)")
        }
        guard let name = args["point"]?.stringValue else {
            throw LabError.usage("crashAt: \"point\" must be a crash point name")
        }
        let nthValue = args["nth"] ?? .int(1)
        guard let nth = nthValue.intValue, nth >= 1 else {
            throw LabError.usage("crashAt: \"nth\" must be a whole number ≥ 1, got \(nthValue)")
        }
        return (try point(named: name, role: role), nth)
    }

    /// Writes `process.crashing {point, nth}`, flushes it to the file and SIGKILLs this process.
    public static func die(at point: CrashPoint, nth: Int, work: Int, events: EventLog) -> Never {
        events.emit(.processCrashing, [("point", .string(point.rawValue)), ("nth", .int(nth)), ("work", .int(work)),
                                         ("pid", .int(Int(getpid())))])
        events.flush()
        kill(getpid(), SIGKILL)
        // SIGKILL cannot be caught; this only keeps the compiler's promise of no return.
        while true { pause() }
    }
}

/// One `--crash-at` item: a point, the occurrence it fires on, and (in a pool) the device it is for.
public struct ArmedCrash: Sendable, Equatable {
    public var device: String?
    public var point: CrashPoint
    public var nth: Int

    public init(device: String? = nil, point: CrashPoint, nth: Int = 1) {
        self.device = device
        self.point = point
        self.nth = nth
    }
}
