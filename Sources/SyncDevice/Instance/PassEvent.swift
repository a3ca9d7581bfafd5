import LabKit
import SyncProtocol

/// The events of every pass — a hint received, a trigger, the pass's start and end, each change applied, the cursor
/// moved — as typed values (`DeviceDirective.event`). A real process writes one straight into its event line
/// (`DeviceShell.emit(_:)`), with no field list built; the simulation and the tests read the same fields as an
/// `EventLine` (`line`). Both come from the one `write(to:)`, so they cannot differ (`PassEventTests`).
public enum PassEvent: Sendable, Equatable {
    case hintReceived(hint: String, head: Int, keys: [String])
    /// A trigger that starts a pass or joins the running one (`coalesced`); a queued one, or a continuation, is an
    /// `EventLine` of its own.
    case trigger(Trigger, coalesced: Bool)
    case passStart(pass: Int, trigger: Trigger, limitSec: Double?)
    case changeApplied(Change, pass: Int, trigger: Trigger)
    case cursorMoved(from: Int, to: Int, pass: Int)
    case passEnd(PassEnd)

    /// `pass.end`'s fields, in the order of its line.
    public struct PassEnd: Sendable, Equatable {
        public var pass: Int
        public var trigger: Trigger
        public var sent: Int
        public var pulled: Int
        public var cursor: Int
        public var cutOff: Bool
        public var outcome: PassOutcome
        public var head: Int
        public var durationSec: Double
        public var executionSec: Double
        public var nextRunSim: Double?
    }

    /// Its type's name as its line spells it, kept here: reading the catalogue's `EventType` for every line would
    /// copy it.
    public var quoted: EventType.Quoted {
        switch self {
        case .hintReceived: Self.hintReceived
        case .trigger: Self.trigger
        case .passStart: Self.passStart
        case .changeApplied: Self.changeApplied
        case .cursorMoved: Self.cursorMoved
        case .passEnd: Self.passEnd
        }
    }

    private static let hintReceived = EventCatalogue.hintReceived.quoted
    private static let trigger = EventCatalogue.trigger.quoted
    private static let passStart = EventCatalogue.passStart.quoted
    private static let changeApplied = EventCatalogue.changeApplied.quoted
    private static let cursorMoved = EventCatalogue.cursorMoved.quoted
    private static let passEnd = EventCatalogue.passEnd.quoted

    public var type: EventType {
        switch self {
        case .hintReceived: EventCatalogue.hintReceived
        case .trigger: EventCatalogue.trigger
        case .passStart: EventCatalogue.passStart
        case .changeApplied: EventCatalogue.changeApplied
        case .cursorMoved: EventCatalogue.cursorMoved
        case .passEnd: EventCatalogue.passEnd
        }
    }

    /// The fields, in the order of the line.
    public func write<Sink: EventFieldSink & ~Copyable>(to sink: inout Sink) {
        switch self {
        case let .hintReceived(hint, head, keys):
            sink.add("hint", hint)
            sink.add("head", head)
            sink.add("keys", strings: keys)
        case let .trigger(trigger, coalesced):
            sink.add("trigger", trigger.rawValue)
            sink.add("coalesced", coalesced)
        case let .passStart(pass, trigger, limitSec):
            sink.add("pass", pass)
            sink.add("trigger", trigger.rawValue)
            if let limitSec { sink.add("limitSec", limitSec) }
        case let .changeApplied(change, pass, trigger):
            sink.add("seq", change.seq)
            sink.add("key", change.key)
            sink.add("origin", change.origin)
            sink.add("draft", change.draft)
            sink.add("pass", pass)
            sink.add("trigger", trigger.rawValue)
        case let .cursorMoved(from, to, pass):
            sink.add("from", from)
            sink.add("to", to)
            sink.add("pass", pass)
        case let .passEnd(end):
            sink.add("pass", end.pass)
            sink.add("trigger", end.trigger.rawValue)
            sink.add("sent", end.sent)
            sink.add("pulled", end.pulled)
            sink.add("cursor", end.cursor)
            sink.add("cutOff", end.cutOff)
            sink.add("outcome", end.outcome.rawValue)
            sink.add("head", end.head)
            sink.add("durationSec", end.durationSec)
            sink.add("executionSec", end.executionSec)
            if let next = end.nextRunSim { sink.add("nextRunSim", next) }
        }
    }

    /// The event as a type and a field list.
    public var line: EventLine {
        var list = EventFieldList()
        write(to: &list)
        return EventLine(type, list.fields)
    }
}
