import LabKit
import SyncProtocol

/// What the instance asks its shell to do, in order.
public enum ServerDirective: Sendable, Equatable {
    /// Send `message` to a device on the request socket, after `delayMs` (0: now) without holding up anyone else.
    case reply(to: Peer, message: Message, delayMs: Int)
    /// Send `message` on the control socket.
    case controlReply(to: Peer, message: Message)
    /// Apply the push in one transaction, then hand the outcomes to `ServerInstance.onApplied`.
    case apply(PushRequest)
    /// Read the page, then hand it to `ServerInstance.onPulled`.
    case pull(PullRequest)
    /// Send a head-moved notice to the broker without blocking, then report to `ServerInstance.onNotice`.
    case notify(Notice)
    /// Add or update the device in the database, then report to `ServerInstance.onDeviceAdded`.
    case addDevice(DeviceRecord, ControlTicket)
    /// Arm or disarm a crash point (control `crashAt`), then report to `ServerInstance.onCrashArmed`.
    case armCrash([String: JSONValue], ControlTicket)
    /// Write an event.
    case log(EventLine)
    /// Finish: send what is queued, close the sockets, write `process.stopped`.
    case stop
}
