import Foundation
import LabKit

/// The values of the device's multi-valued design switches (DeviceSettings, docs/TOPOLOGY.md "Design switches").
extension DeviceSettings {
    /// Which passes pull from the cursor.
    public enum PullOn: String, Sendable, CaseIterable {
        /// Every pass pulls (the lab's design).
        case all
        /// Only a hint's pass pulls: trust the push.
        case pushOnly
        /// Only the platform's scheduled runs (periodic, refresh window, interval timer) pull.
        case scheduledOnly

        /// Whether a pass run for `trigger` pulls.
        public func pulls(_ trigger: Trigger) -> Bool {
            switch self {
            case .all: return true
            case .pushOnly: return trigger == .push
            case .scheduledOnly: return Trigger.scheduled.contains(trigger)
            }
        }
    }

    public enum OpQueue: String, Sendable, CaseIterable {
        case ledger, memory
    }

    public enum CursorCommit: String, Sendable, CaseIterable {
        case withPage, beforePage
    }

    public enum PageCommit: String, Sendable, CaseIterable {
        case perPage, atPassEnd
    }

    public enum OutboxOrder: String, Sendable, CaseIterable {
        case saved, newestFirst
    }

    public enum OwnWrites: String, Sendable, CaseIterable {
        /// The replica keeps an acknowledged own edit until the page holding it is pulled (the lab's design).
        case keep
        /// The replica replays only unsettled ops over the server's state: an acknowledged edit not pulled yet
        /// vanishes when a page ending below it touches its draft (the switch's mistake).
        case untilPulled
    }

    public enum Reschedule: String, Sendable, CaseIterable {
        case first, last
    }

    public enum TaskKind: String, Sendable, CaseIterable {
        case refresh, processing
        /// No BGTask at all: the app counts on silent pushes to wake it (seed 000's third attempt).
        case noTask = "none"
    }

    public enum TaskRegistration: String, Sendable, CaseIterable {
        /// `register(forTaskWithIdentifier:)` before launch finishes; one identifier in Info.plist, register, request.
        case atLaunch
        /// Registered after `didFinishLaunchingWithOptions` returned: a launch for the task finds no handler.
        case late
        /// The request's identifier is not in `BGTaskSchedulerPermittedIdentifiers`: `submit` fails (`notPermitted`).
        case idMismatch
    }

    public enum WebTriggers: String, Sendable, CaseIterable {
        case interval
        case intervalOnline = "interval+online"
        case intervalOnlineVisibility = "interval+online+visibility"

        /// Whether the page has a listener that runs a pass for `trigger`.
        public func wires(_ trigger: Trigger) -> Bool {
            switch trigger {
            case .connectivity: return self != .interval
            case .visibility: return self == .intervalOnlineVisibility
            case .push, .foreground, .localEdit, .periodic, .opportunistic, .interval, .manual: return true
            }
        }
    }

    public enum UnloadFlush: String, Sendable, CaseIterable {
        /// Nothing: pending ops wait for the next page load.
        case none
        /// An async task started in the unload handler: the page is gone before it runs.
        case task
        /// `navigator.sendBeacon` of the pending batch: delivered after the page is gone.
        case beacon
    }
}

extension DeviceSettings {
    /// The design switches (issue 13) and the execution costs, as knobs: each default is the lab's design.
    static let switchKnobs: [DeviceKnob] = [
        .named("pullOn", "pull-on", \.pullOn,
               "design switch: which passes pull (all; pushOnly trusts the push; scheduledOnly: background runs only)"),
        .bool("foregroundPull", "foreground-pull", \.foregroundPull,
              "design switch: coming to the foreground runs a pass (seed 004's fix)"),
        .named("opQueue", "op-queue", \.opQueue,
               "design switch: ledger (durable) or memory (unsent ops lost at kill, force quit, restart)"),
        .bool("keyPerAttempt", "key-per-attempt", \.keyPerAttempt,
              "design switch: a new idempotency key on every attempt (the lost-ack double apply)"),
        .bool("leases", "leases", \.leases,
              "design switch: claims carry an expiring lease (false: a killed pass strands its ops)"),
        .named("cursorCommit", "cursor-commit", \.cursorCommit,
               "design switch: withPage (one transaction) or beforePage (cursor committed first, page later)"),
        .named("pageCommit", "page-commit", \.pageCommit,
               "design switch: perPage (each page with its cursor) or atPassEnd (a cut-off pass keeps nothing)"),
        .named("outboxOrder", "outbox-order", \.outboxOrder,
               "design switch: saved (each op in the order the user saved it) or newestFirst (a LIFO outbox)"),
        .named("ownWrites", "own-writes", \.ownWrites,
               "design switch: keep (an acknowledged edit shows until pulled) or untilPulled (it can vanish)"),
        .bool("retryPermanent", "retry-permanent", \.retryPermanent,
              "design switch: permanent refusals retried forever, no attempt cap"),
        .bool("backoffCap", "backoff-cap", \.backoffCap, "design switch: cap the exponential backoff at backoffCapSec"),
        .bool("coalesce", "coalesce", \.coalesce,
              "design switch: unique work, KEEP (false: every trigger during a pass queues a full pass)"),
        .number("opCostSec", "op-cost-sec", 0...3_600, \.opCostSec,
                "execution seconds charged per op sent (a window can run out mid-pass)"),
        .number("pageCostSec", "page-cost-sec", 0...3_600, \.pageCostSec,
                "execution seconds charged per page applied"),
        .bool("expirationHandler", "expiration-handler", \.expirationHandler,
              "design switch, iOS: expirationHandler wired (false: an expired task is killed, the budget shrinks)"),
        .named("reschedule", "reschedule", \.reschedule,
               "design switch, iOS: submit the next request first in the handler, or last"),
        .named("taskKind", "task-kind", \.taskKind,
               "design switch, iOS: refresh (BGAppRefreshTask), processing (BGProcessingTask, external power) or none"),
        .bool("setTaskCompleted", "set-task-completed", \.setTaskCompleted,
              "design switch, iOS: the handler calls setTaskCompleted (false: every task expires, the budget halves)"),
        .named("taskRegistration", "task-registration", \.taskRegistration,
               "design switch, iOS: atLaunch, late (a window finds no handler) or idMismatch (not in Info.plist)"),
        .named("webTriggers", "web-triggers", \.webTriggers,
               "design switch, web: which page events run a pass besides load and the interval timer"),
        .named("unloadFlush", "unload-flush", \.unloadFlush,
               "design switch, web: at tab close: none, task (never runs) or beacon (sendBeacon, = beacon: true)"),
    ]
}
