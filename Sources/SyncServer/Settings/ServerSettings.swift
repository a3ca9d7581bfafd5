import LabKit
import SQLite

/// The server's settings that a topology gives (`server: {…}`) and its command line carries: how notices leave, its
/// SQLite durability, the fault knobs and the design switches. Each default is written once, here or in
/// `ServerFaults` and `ServerSwitches`; `ServerSettings.knobs` (ServerSettings+Knobs.swift) is how topologies and
/// command lines name them.
public struct ServerSettings: Sendable, Equatable {
    /// How head-moved notices leave the server.
    public enum NotifyMode: String, Sendable, CaseIterable {
        /// A PUSH socket: a notice that would block (no broker, queue full) is dropped and logged.
        case push
        /// A PUB socket: libzmq drops what a slow or absent subscriber cannot take, silently ("natural loss").
        case pub
    }

    public var notifyMode: NotifyMode = .push
    /// Notices queued for the broker before loss.
    public var notifyHighWaterMark = 1000
    /// WAL with `normal`: a commit survives the process being killed at any moment (the lab's faults); only a power
    /// cut or OS crash could roll back the last commits. `full` adds an fsync to every commit (docs/PERFORMANCE.md).
    public var synchronous: Synchronous = .normal
    public var faults: ServerFaults = .off
    /// The design switches (issue 13); the default is the lab's design.
    public var switches: ServerSwitches = .correct

    public init() {}
}
