import Foundation
import LabKit

/// The events a design switch or a platform limit emits: the cause of a lesson's broken half, which the other checks
/// see only as its effect (a lost edit, a stale open). Each is drawn as a mark on its device's lane and counted per
/// device (report.md "Switch and platform-limit events", report.json `switchEvents`). Names are the events' own, as
/// the roles write them; a kind that is one event type read in one way (an `op.result` retried by `retryPermanent`)
/// is named `type (qualifier)`.
struct SwitchEvents {
    /// What makes a device emit the event.
    enum Cause: Equatable, Sendable {
        /// A device design switch set to `value` (nil: to anything but the lab's default).
        case device(key: String, value: String?)
        /// A switch of the server (`server.KEY`) or the broker (`broker.KEY`) for the device's account.
        case role(String)
        /// A platform's limit or a lifecycle step: emitted by the lab's design too.
        case platform(String)
        /// A platform's limit that a user's habit (a device's `engagement`) brings on: it tells that user's device
        /// from one whose user opens the app more often.
        case habit(String)

        var words: String {
            switch self {
            case .device(let key, let value): return "switch \(key)\(value.map { " = \($0)" } ?? " (not the lab's)")"
            case .role(let key): return "switch \(key)"
            case .platform(let what), .habit(let what): return what
            }
        }
    }

    struct Kind: Sendable {
        let name: String
        let type: String
        let cause: Cause
        let matches: @Sendable (Event) -> Bool

        init(_ type: EventType, _ cause: Cause) { self.init(type, nil, cause) }

        init(_ type: EventType, _ qualifier: String?, _ cause: Cause,
             matches: @escaping @Sendable (Event) -> Bool = { _ in true }) {
            self.name = qualifier.map { "\(type.name) (\($0))" } ?? type.name
            self.type = type.name
            self.cause = cause
            self.matches = matches
        }
    }

    /// One occurrence: on `device` (the device the event is about; `broker`/`server` when it names none).
    struct Occurrence: Equatable {
        let device: String
        let sim: Double
        let kind: String
        let cause: Cause
        let words: String
    }

    /// Every kind, in the order report.md lists them. A new switch that emits an event adds its row here.
    static let catalogue: [Kind] = [
        Kind(.passSkippedPull, .device(key: "pullOn", value: nil)),
        Kind(.queueLost, .device(key: "opQueue", value: "memory")),
        Kind(.opKeyRenewed, .device(key: "keyPerAttempt", value: "true")),
        Kind(.outboxNewestFirst, .device(key: "outboxOrder", value: "newestFirst")),
        Kind(.replicaOwnWriteHidden, .device(key: "ownWrites", value: "untilPulled")),
        Kind(.leaseStranded, .device(key: "leases", value: "false")),
        Kind(.cursorCommittedBeforePage, .device(key: "cursorCommit", value: "beforePage")),
        Kind(.pageLost, .device(key: "cursorCommit", value: "beforePage")),
        Kind(.pagesDiscarded, .device(key: "pageCommit", value: "atPassEnd")),
        Kind(.opResult, "retried anyway", .device(key: "retryPermanent", value: "true")) {
            $0.string("reason")?.contains("retryPermanent") == true
        },
        Kind(.trigger, "queued", .device(key: "coalesce", value: "false")) { $0["queued"] != nil },
        Kind(.passQueuedStarting, .device(key: "coalesce", value: "false")),
        Kind(.iosWindowExpired, "killed", .device(key: "expirationHandler", value: "false")) {
            $0["handled"]?.boolValue == false
        },
        Kind(.budgetShrunk, "task not completed", .device(key: "setTaskCompleted", value: "false")) {
            $0.string("reason")?.hasPrefix("setTaskCompleted=") == true
        },
        Kind(.budgetShrunk, .device(key: "expirationHandler", value: "false")),
        Kind(.budgetRecovered, .device(key: "expirationHandler", value: "false")),
        Kind(.iosScheduleLost, .device(key: "reschedule", value: "last")),
        Kind(.scheduleSkipped, .device(key: "taskKind", value: "none")),
        Kind(.iosTaskNotCompleted, .device(key: "setTaskCompleted", value: "false")),
        Kind(.iosTaskNoHandler, .device(key: "taskRegistration", value: "late")),
        Kind(.scheduleNotPermitted, .device(key: "taskRegistration", value: "idMismatch")),
        Kind(.refreshSet, "off at launch", .device(key: "backgroundAppRefresh", value: "false")) {
            $0.string("reason")?.hasPrefix("backgroundAppRefresh=") == true
        },
        Kind(.scheduleSubmitted, "processing", .device(key: "taskKind", value: "processing")) {
            $0.string("api")?.contains("BGProcessingTaskRequest") == true
        },
        Kind(.triggerRefused, "not wired", .device(key: "webTriggers", value: nil)) {
            $0.string("reason")?.hasPrefix("webTriggers=") == true
        },
        Kind(.triggerRefused, "foregroundPull off", .device(key: "foregroundPull", value: "false")) {
            $0.string("reason")?.hasPrefix("foregroundPull") == true
        },
        Kind(.unloadTaskAbandoned, .device(key: "unloadFlush", value: "task")),
        Kind(.beaconSent, .device(key: "unloadFlush", value: "beacon")),
        Kind(.opReapplied, .role("server.idempotency = false")),
        Kind(.replyBeforeCommit, .role("server.replyBeforeCommit")),
        Kind(.ackLost, .role("server.replyBeforeCommit")),
        Kind(.noticeBeforeCommit, .role("server.noticeBeforeCommit")),
        Kind(.noticePhantom, .role("server.noticeBeforeCommit")),
        Kind(.hintDataAttached, .role("broker.hintCarriesData")),
        Kind(.hintHeld, "doze", .role("broker.fcmPriority = normal")) { $0.string("reason") == "doze" },
        // FCM's reaction to the app server sending every change at high priority with nothing shown (the priority
        // `visible` never meets it): that choice's event, so it marks the half that made it.
        Kind(.hintHeld, "fcm-demoted", .role("broker.fcmPriority = high for data-only messages: FCM demoted it")) {
            $0.string("reason") == "fcm-demoted"
        },
        Kind(.hintMalformed, .role("broker.hintCarriesData")),
        Kind(.iosWindowExpired, "handled", .platform("iOS: the window's execution time ran out")) {
            $0["handled"]?.boolValue == true
        },
        Kind(.scheduleUnavailable, .platform("iOS: BGTaskScheduler.submit refused")),
        Kind(.hintCoalesced, .platform("the push service kept only the newer of two held pushes")),
        Kind(.hintDiscarded, "refresh-off", .platform("APNs: Background App Refresh is off")) {
            $0.string("reason") == "refresh-off"
        },
        Kind(.hintDiscarded, "deleted-messages-ignored", .role("broker.fcmDeletedMessages = ignored")) {
            $0.string("reason") == "deleted-messages-ignored"
        },
        Kind(.bucketDeferred, .habit("Android: the app's standby bucket held a due job (not doze); engagement")),
        Kind(.passesDropped, .platform("the app's process ended with passes waiting")),
        Kind(.appReinstalled, "ops lost", .platform("the app was deleted and installed again")) {
            ($0.int("lost") ?? 0) > 0
        },
    ]

    /// The kinds of each event type, so the walk over a run's events looks up one dictionary per event.
    private static let byType: [String: [Kind]] = Dictionary(grouping: catalogue, by: \.type)

    let occurrences: [Occurrence]

    /// - Parameter devices: the run's devices; an event of the server or the broker goes to the device it names.
    init(events: [Event], devices: Set<String>) {
        var out: [Occurrence] = []
        // The broker names a hint's device only when it accepts the hint, just after attaching its data.
        var waitingForDevice: [String: Int] = [:]
        for e in events {
            if e.proc == "broker", e.type == EventCatalogue.hintAccepted, let hint = e.string("hint"),
               let index = waitingForDevice.removeValue(forKey: hint), let device = e.string("device")
            {
                let o = out[index]
                out[index] = Occurrence(device: device, sim: o.sim, kind: o.kind, cause: o.cause, words: o.words)
            }
            guard let kinds = Self.byType[e.type], let kind = kinds.first(where: { $0.matches(e) }) else { continue }
            let device: String
            if devices.contains(e.proc) {
                device = e.proc
            } else if e.proc == "server" || e.proc == "broker" {
                device = e.string("device").flatMap { devices.contains($0) ? $0 : nil } ?? e.proc
            } else {
                continue
            }
            if e.proc == "broker", device == "broker", let hint = e.string("hint") {
                waitingForDevice[hint] = out.count
            }
            out.append(Occurrence(device: device, sim: e.sim, kind: kind.name, cause: kind.cause,
                                  words: Self.words(e, kind)))
        }
        occurrences = out
    }

    /// The event in words: its kind, its fields, its own reason, and the switch or limit behind it.
    static func words(_ e: Event, _ kind: Kind) -> String {
        var text = (e.proc == "server" || e.proc == "broker" ? "\(e.proc): " : "") + kind.name
        let fields = (e.fields.objectValue ?? []).filter { $0.0 != "reason" }.map { pair -> String in
            let value: String
            if let items = pair.1.arrayValue {
                let shown = items.prefix(4).map { $0.stringValue ?? $0.description }
                value = "[" + shown.joined(separator: ", ") + (items.count > 4 ? ", …" : "") + "]"
            } else {
                value = pair.1.stringValue ?? pair.1.description
            }
            return "\(pair.0) \(value)"
        }
        if !fields.isEmpty { text += " {" + fields.joined(separator: ", ") + "}" }
        if let reason = e.string("reason") { text += ": \(reason)" }
        return text + " [\(kind.cause.words)]"
    }

    /// Count per device (or `server`/`broker`) and kind.
    var counts: [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        for o in occurrences { out[o.device, default: [:]][o.kind, default: 0] += 1 }
        return out
    }

    /// The kinds seen, in catalogue order.
    var kindsSeen: [String] {
        let seen = Set(occurrences.map(\.kind))
        var names: [String] = []
        for kind in Self.catalogue where seen.contains(kind.name) && !names.contains(kind.name) {
            names.append(kind.name)
        }
        return names
    }

    /// The cause of a kind, by its name.
    static func cause(of name: String) -> Cause? { catalogue.first { $0.name == name }?.cause }
}
