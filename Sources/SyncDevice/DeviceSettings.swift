import Foundation
import SQLite

/// The knobs of one device (each default written here once; `DeviceSettings.knobs` is how topologies and command
/// lines name them): pass bounds, timeouts, backoff and the inputs of its platform model. Times are simulated
/// seconds unless the name says otherwise.
public struct DeviceSettings: Sendable, Equatable {
    /// Ops per push (one push per pass).
    public var batch = 50
    /// Changes per pulled page.
    public var pageLimit = 200
    /// Pages per pass: a pass is small and resumable; what it leaves is pulled by the next one.
    public var maxPages = 5
    /// How long a claim holds an op; a pass that dies leaves leases that the next pass reclaims once expired.
    public var leaseSec: Double = 30
    /// Real milliseconds before a sent request without a reply becomes an unknown outcome.
    public var replyTimeoutMs = 1_000
    /// Transient failures (`retryLater`) before an op ends in `needsAttention`.
    public var maxAttempts = 10
    /// Exponential backoff: base · 2^(attempt-1), capped.
    public var backoffBaseSec: Double = 30
    public var backoffCapSec: Double = 3_600
    /// What the app asks its platform for (seed 000's `schedule(15.minutes)`).
    public var desiredIntervalSec: Double = 15 * 60
    /// How old data may be and still be shown as current.
    public var freshnessBudgetSec: Double = 60 * 60
    /// App opens per simulated day: drives the iOS budget and the Android standby bucket.
    public var opensPerDay: Double = 3
    /// Where the app starts: foreground, background or closed.
    public var startState: StartState = .background
    public var charging = false
    /// Web: flush pending ops with a fire-and-forget push when the tab closes (`navigator.sendBeacon`).
    public var beaconOnClose = false
    /// Simulated seconds per real second: turns the real reply timeout into simulated time.
    public var timeScale: Double = 1
    /// Which clock a pass's execution time (the iOS window, Android's worker limit and job quota) is measured on.
    public var executionClock: ExecutionClock = .real
    /// SQLite `PRAGMA synchronous` of the device's file: normal survives kill -9, which is every fault the lab causes.
    public var synchronous: Synchronous = .normal

    public init() {}

    /// The reply timeout in simulated seconds.
    public var replyTimeoutSim: Double { Double(replyTimeoutMs) / 1_000 * timeScale }

    /// Simulated seconds per second of pass execution.
    public var executionScale: Double { executionClock == .real ? timeScale : 1 }

    /// When an op whose attempt number `attempt` (1-based) failed transiently may be tried again.
    public func backoff(afterAttempt attempt: Int) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 40)))
        return min(backoffCapSec, backoffBaseSec * pow(2, exponent))
    }
}
