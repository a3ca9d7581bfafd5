import LabKit
import SyncProtocol

/// What the broker's IO shell must do, in order. The instance decides; the shell only carries these out.
public enum BrokerDirective: Sendable {
    /// Send `hint` to the device `target` names through the device socket, to routing id `peer`; report the outcome
    /// with `BrokerInstance.onSent`.
    case deliver(HintTarget, peer: [UInt8], hint: HintRef, copy: DeliveryCopy)
    /// Answer `peer` on `socket`.
    case reply(socket: BrokerSocket, peer: [UInt8], message: Message)
    /// Call `onTick` once simulated time `at` has come (earlier is harmless).
    case scheduleTick(at: Double)
    /// Write an event.
    case log(EventLine)
    /// Write `hint.accepted` for `hint`, accepted for the device `target` names from `notice` (its origin and the
    /// seqs of its changes); `resync` adds `"reason":"resync"`. Typed, unlike `log`: the shell writes the line from
    /// these values and their fragments rendered once, with no field list built for every hint.
    case hintAccepted(HintTarget, hint: HintRef, notice: NoticeFields, resync: Bool)
    /// Write `hint.delivered`: libzmq took `hint` for `target`, `waitedSec` simulated seconds after it was accepted.
    case hintDelivered(HintTarget, hint: HintRef, waitedSec: Double)
    /// Carry out the `hintAccepted` and `deliver` directives of a notice's hints that nothing can hold back, one after
    /// another as if each stood in the list (`FanOut.directives`).
    case fanOut(FanOut)
    /// Arm or disarm a crash point (the control command `crashAt` from `peer`), then report to
    /// `BrokerInstance.onCrashArmed`.
    case armCrash(Control, peer: [UInt8])
    /// Stop serving: close the sockets, write `process.stopped`, exit 0.
    case stop
}

/// Every payload compared (`Control` by its request, command and arguments).
extension BrokerDirective: Equatable {}

extension BrokerDirective: CustomStringConvertible {
    /// One line per directive: the decision log compared by the reproducibility tests.
    public var description: String {
        switch self {
        case let .deliver(target, peer, hint, copy):
            return "deliver \(copy.rawValue) \(hint.id) head \(hint.head) to \(target.id) (\(PeerName.describe(peer)))"
        case let .reply(socket, peer, message):
            return "reply on \(socket.rawValue) to \(PeerName.describe(peer)): \(message.type)"
        case let .scheduleTick(at):
            return "tick at \(at)"
        case .log, .hintAccepted, .hintDelivered:
            return event?.description ?? ""
        case let .fanOut(fanOut):
            return fanOut.directives.map(\.description).joined(separator: "\n")
        case let .armCrash(control, peer):
            return "arm crash \(JSONValue.object(control.args.keys.sorted().map { ($0, control.args[$0]!) })) "
                + "for \(PeerName.describe(peer))"
        case .stop:
            return "stop"
        }
    }
}

extension BrokerDirective {
    /// The event a directive writes, as type and fields in the order of the line; nil when it writes none, or several
    /// (a fan-out: those of its `directives`).
    public var event: EventLine? {
        switch self {
        case let .log(line):
            return line
        case let .hintAccepted(target, hint, notice, resync):
            return EventLine(.hintAccepted, [
                ("hint", .string(hint.id)), ("device", .string(target.id)), ("account", .string(target.account)),
                ("head", .int(hint.head)), ("origin", .string(notice.origin)), ("seqs", notice.seqs),
            ] + (resync ? [("reason", "resync")] : []))
        case let .hintDelivered(target, hint, waitedSec):
            return EventLine(.hintDelivered, [
                ("hint", .string(hint.id)), ("device", .string(target.id)), ("head", .int(hint.head)),
                ("waitedSec", .double(waitedSec)),
            ])
        case .deliver, .reply, .scheduleTick, .fanOut, .armCrash, .stop:
            return nil
        }
    }
}
