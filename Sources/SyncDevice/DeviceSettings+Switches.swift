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

    public enum Reschedule: String, Sendable, CaseIterable {
        case first, last
    }

    public enum TaskKind: String, Sendable, CaseIterable {
        case refresh, processing
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
