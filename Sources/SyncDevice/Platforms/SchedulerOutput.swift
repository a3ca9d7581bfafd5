import LabKit

/// What a scheduler step produced: passes it grants and events it wants written.
public struct SchedulerOutput: Sendable, Equatable {
    public var grants: [Trigger]
    public var events: [EventLine]

    public init(grants: [Trigger] = [], events: [EventLine] = []) {
        self.grants = grants
        self.events = events
    }

    static func + (lhs: SchedulerOutput, rhs: SchedulerOutput) -> SchedulerOutput {
        SchedulerOutput(grants: lhs.grants + rhs.grants, events: lhs.events + rhs.events)
    }
}
