import LabKit
import SyncProtocol

/// What a `DeviceDriver` needs from the machine it runs on: a clock, an event log, and links to the server, the
/// broker and the control peer. `DeviceShell` is a real process's (sockets, an event file); `SimDeviceShell` is the
/// simulated machine's. Nothing here decides anything: every decision is the instance's or the driver's.
public protocol DeviceIO: EventEmitter {
    /// Simulated seconds now: the instance's `now`.
    var now: Double { get }
    /// Wall µs written into the ledger's rows.
    var wallMicros: Int64 { get }
    /// The process id written in `process.*` events.
    var pid: Int { get }
    /// A step begins or ends: a real shell holds its events and writes them in one go at the end.
    func stepBegan()
    func stepEnded()
    /// Writes what the events hold before something leaves the process, so no reply is seen before its cause.
    func flushEvents()
    /// Hands `message` to the server or the broker; nil when it left, otherwise why it could not.
    func transmit(_ message: Message, to peer: DevicePeer) -> String?
    /// Answers a control request from `peer` (the routing id it came with).
    func answerControl(_ message: Message, to peer: [UInt8])
    /// An armed crash point fired, after the step's writes so far were committed. A real process dies here and
    /// never returns; the simulation marks the process dead and returns.
    func die(at point: CrashPoint, nth: Int, work: Int)
    /// After each thing the driver carried out (a directive, a commit, a send, a reply): true when the process dies
    /// right here, with what it has not committed lost. The simulation's crash-anywhere; a real process says false.
    func dies(after boundary: DeviceBoundary) -> Bool
    /// Opens the device's ledger file; `wiping` deletes it first (a reinstall).
    func openLedger(wiping: Bool) throws -> Ledger
    /// Writes one of a pass's typed events; by default as its `EventLine`.
    func emit(_ event: PassEvent)
}

/// The device's two peers on the wire.
public enum DevicePeer: String, Sendable {
    case server, broker
}

/// A point between two things a device carries out, where crash-anywhere may kill it.
public enum DeviceBoundary: String, Sendable, CaseIterable {
    case directive, commit, send, reply
}

extension DeviceIO {
    public func stepBegan() {}
    public func stepEnded() {}
    public func flushEvents() {}
    public func dies(after boundary: DeviceBoundary) -> Bool { false }

    public func emit(_ event: PassEvent) {
        let line = event.line
        emit(line.type, line.fields)
    }
}
