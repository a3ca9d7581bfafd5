/// What a scheduler step produced: passes it grants and events it wants written.
public struct SchedulerOutput: Sendable, Equatable {
    public var grants: [Trigger]
    public var events: [LogLine]

    public init(grants: [Trigger] = [], events: [LogLine] = []) {
        self.grants = grants
        self.events = events
    }

    static func + (lhs: SchedulerOutput, rhs: SchedulerOutput) -> SchedulerOutput {
        SchedulerOutput(grants: lhs.grants + rhs.grants, events: lhs.events + rhs.events)
    }
}
