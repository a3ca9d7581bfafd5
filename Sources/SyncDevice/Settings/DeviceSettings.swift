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
    public var opensPerDay: Double = 4
    /// Where the app starts: foreground, background or closed.
    public var startState: StartState = .background
    public var charging = false
    /// Android: the screen stays on all run while the app is in the background (the user is in other apps): the
    /// phone never dozes, and the standby bucket alone rations the app's jobs (lesson standby-buckets).
    public var screenOn = false
    /// iOS: the user's Background App Refresh switch when the app starts (the scenario's `refresh` step changes it):
    /// off, `BGTaskScheduler.submit` fails and background pushes are not delivered (seed 001).
    public var backgroundAppRefresh = true
    /// Web: flush pending ops with a fire-and-forget push when the tab closes (`navigator.sendBeacon`); the same as
    /// `unloadFlush == .beacon`.
    public var beaconOnClose: Bool {
        get { unloadFlush == .beacon }
        set { unloadFlush = newValue ? .beacon : .none }
    }
    /// Simulated seconds per real second: turns the real reply timeout into simulated time.
    public var timeScale: Double = 1
    /// Which clock a pass's execution time (the iOS window, Android's worker limit and job quota) is measured on.
    public var executionClock: ExecutionClock = .real
    /// An outside device: how long (seconds of execution) its program may take to end a pass after `expire` before
    /// the lab side kills it, as iOS kills a task whose expiration handler does not finish (docs/DEVICE-CONTRACT.md).
    public var expireGraceSec: Double = 5
    /// SQLite `PRAGMA synchronous` of the device's file: normal survives kill -9, which is every fault the lab causes.
    public var synchronous: Synchronous = .normal

    // MARK: - Design switches (issue 13): each defaults to the lab's correct design; docs/TOPOLOGY.md cites each.

    /// Which triggers pull from the cursor. `pushOnly` trusts the push: only a hint's pass pulls ("push is a hint;
    /// durable state is the recovery mechanism", seed 001). `scheduledOnly`: only the platform's scheduled runs
    /// pull (seed 004's draft sync that relied on background refresh).
    public var pullOn: PullOn = .all
    /// Whether bringing the app to the foreground runs a pass (seed 004's fix: "an immediate sync when the app comes
    /// to the foreground").
    public var foregroundPull = true
    /// Where unsent ops live: the ledger (durable), or memory only, lost at a kill, force quit or restart
    /// ("A scheduler should wake a durable processor. It should not contain the only copy of work.", seed 001).
    public var opQueue: OpQueue = .ledger
    /// A new idempotency key on every attempt, the reply mapped back to the op by it: the lost-ack double apply
    /// ("Idempotency keys created with the operation, and reused on every replay", seed 001).
    public var keyPerAttempt = false
    /// Claims carry a lease that expires; off: a claimed op is `sending` with no expiry and a killed pass strands it
    /// ("An operation marked in progress without an expiration is stranded forever if the process dies", seed 001).
    public var leases = true
    /// When the cursor is committed: with its page (one transaction), or before it in a commit of its own, so a kill
    /// between the two loses the page (seed 001: "cursor moved after the commit").
    public var cursorCommit: CursorCommit = .withPage
    /// When a pass applies the pages it pulls: each with its cursor as it goes, or all at the pass's end, so a pass
    /// cut off before its end keeps nothing and the next starts over (seed 001: "a large one is cut off and starts
    /// over").
    public var pageCommit: PageCommit = .perPage
    /// The order a pass sends its outbox in: as the user saved the ops, or newest first, so a draft's older edit
    /// lands after its newer one and wins (issue 30's lesson `outbox-order`; the mistake of a LIFO queue).
    public var outboxOrder: OutboxOrder = .saved
    /// Whether the replica keeps the user's acknowledged edits that are not pulled yet: `untilPulled` rebuilds a
    /// draft from the server's state and the unsettled ops only, so a page that ends below an acknowledged edit hides
    /// it (issue 30's lesson `read-your-writes`).
    public var ownWrites: OwnWrites = .keep
    /// Permanent failures (`rejected`) retried as if transient, forever ("return retry only for transient
    /// failures, cap your attempts", seed 002).
    public var retryPermanent = false
    /// Whether the exponential backoff is capped at `backoffCapSec` (seed 002: "capped backoff").
    public var backoffCap = true
    /// Unique work, KEEP: a trigger during a pass joins the one follow-up; off: each one queues another full pass
    /// (seed 002: "a screen that enqueues on every resume queues the same work many times").
    public var coalesce = true
    /// Execution charged per op sent and per page applied, in seconds of execution: with it a window can run out
    /// mid-pass (the iOS 30 s window, Android's worker limit). Small defaults: no shipped topology comes near a limit.
    public var opCostSec: Double = 0.01
    public var pageCostSec: Double = 0.1
    /// iOS: the handler sets `expirationHandler` (cancel the work, `setTaskCompleted(success: false)`); off: the
    /// system kills the task, in-flight work is left as is and the app's budget shrinks (seeds 000, 002, 004).
    public var expirationHandler = true
    /// iOS: when the handler submits the next request: first thing, or at its end (an expired or killed task then
    /// leaves nothing scheduled; seed 002: "Reschedule at the start of the handler").
    public var reschedule: Reschedule = .first
    /// iOS: `BGAppRefreshTaskRequest`, or `BGProcessingTaskRequest` with `requiresExternalPower` (windows only while
    /// charging: seed 000's "clustered 02:00–05:00, charging"; seed 004), or none: no task, silent pushes only (seed
    /// 000: "it cannot solve the outbound case").
    public var taskKind: TaskKind = .refresh
    /// iOS: the handler calls `setTaskCompleted` when its pass ends; off: the task stays open until the system expires
    /// it and counts it as misbehaving, so every window shrinks the budget (seed 002: "Always call setTaskCompleted").
    public var setTaskCompleted = true
    /// iOS: where the launch handler is registered and whether the identifiers match: `late` registers it after
    /// launch finished (a window then finds no handler), `idMismatch` submits an identifier Info.plist does not
    /// permit (the submit fails, swallowed by `try?`); both: "the task never fires" (seed 004).
    public var taskRegistration: TaskRegistration = .atLaunch
    /// Web: which page events run a pass besides the page load and the interval timer (seed 000).
    public var webTriggers: WebTriggers = .intervalOnlineVisibility
    /// Web: what the page does when its tab closes (seed 000: "sendBeacon … the only browser API here specified to
    /// outlive its page").
    public var unloadFlush: UnloadFlush = .none

    public init() {}

    /// The reply timeout in simulated seconds.
    public var replyTimeoutSim: Double { Double(replyTimeoutMs) / 1_000 * timeScale }

    /// Simulated seconds per second of pass execution.
    public var executionScale: Double { executionClock == .real ? timeScale : 1 }

    /// When an op whose attempt number `attempt` (1-based) failed transiently may be tried again.
    public func backoff(afterAttempt attempt: Int) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 40)))
        let uncapped = backoffBaseSec * pow(2, exponent)
        return backoffCap ? min(backoffCapSec, uncapped) : uncapped
    }
}
