import Foundation

/// What the launcher does with a process of the run, wherever it runs: a child of its own (`RoleProcess`) or a role
/// started on a host over ssh (`RemoteProcess`, docs/HOSTS.md).
protocol LabProcess: AnyObject {
    var running: Bool { get }
    var paused: Bool { get }
    /// The local pid: the process itself, or the ssh client that holds the remote one.
    var pid: pid_t { get }
    func start() throws
    func signal(_ sig: Int32)
    @discardableResult func poll() -> Bool
    func wait(timeout: Double) -> Bool
    func killNow()
    var residentMB: Double? { get }
    var privateMB: Double? { get }
    /// The most it was ever resident (VmHWM), in MB.
    var peakMB: Double? { get }
    /// CPU seconds so far; nil when unknown (a remote process).
    var cpuSeconds: Double? { get }
}

extension RoleProcess: LabProcess {
    var cpuSeconds: Double? { running ? ProcessCPU.seconds(pid: pid) : nil }
}
