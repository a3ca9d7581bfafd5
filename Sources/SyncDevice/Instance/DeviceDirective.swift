import LabKit
import SyncProtocol

/// What the device's pure logic asks its shell to do, in order. The shell carries each out with an exhaustive
/// `switch`; a directive that touches the ledger is one transaction.
public enum DeviceDirective: Sendable, Equatable {
    /// Send on the DEALER to the server.
    case sendToServer(Message)
    /// Send on the DEALER to the broker.
    case sendToBroker(Message)
    /// Commit a local edit (the op and the replica, in one transaction) before anything else happens; then hand
    /// what was saved to `DeviceInstance.onEditSaved`, and the `edit` command it answers (if any) to `onEditAnswer`.
    case saveEdit(LocalEdit, answering: PendingControl?)
    /// Record that pass `id` started (a row in `passes`).
    case beginPass(id: Int, trigger: Trigger, at: Double)
    /// Reclaim expired leases and claim a bounded batch, in one transaction; then hand the result to
    /// `DeviceInstance.onClaimed`.
    case claim(ClaimRequest)
    /// Record each op's outcome, in one transaction.
    case recordOutcomes([OpOutcome], at: Double)
    /// Apply a page to the replica and move the cursor, in ONE transaction.
    case applyPage(PageApplication)
    /// `cursorCommit: beforePage`: move the cursor to `to` and commit that on its own, before the page is applied.
    case commitCursor(to: Int, pass: Int)
    /// `opQueue: memory`: the app's process is gone and its in-memory queue with it: delete every unsettled op (the
    /// replica forgets them), then write `queue.lost` with their keys.
    case dropQueue(reason: String)
    /// Record how pass `id` ended, the head last seen and the next desired run.
    case endPass(PassRecord)
    /// Remember how old the data was when the user opened the app (a seed-001 metric).
    case recordAppOpen(at: Double, dataAge: Double?)
    /// Remember the guarantee last reported (its `guarantee` event's fields), for `status --db`.
    case recordGuarantee(EventLine)
    /// Acknowledge the `sync` control requests waiting on the pass that just ended.
    case answerSync(tokens: [Int])
    /// A `sync` request waits under `token` for its pass to end (`answerSync` answers it).
    case awaitPass(token: Int, answering: PendingControl)
    /// Send a control answer (`controlAck` or `error`) to the peer that asked.
    case answerControl(to: [UInt8], Message)
    /// Answer `status`: the instance's fields with the ledger's op counts and metrics.
    case answerWithStatus(PendingControl, detail: String)
    /// The user deletes the app and installs it again: delete the ledger file, make a new one with a new install id,
    /// start a new instance on it; then hand the lost ops to its `onReinstalled`.
    case reinstall(answering: PendingControl)
    /// Arm (or disarm) a crash point (`CrashPoints.control`'s arguments); then hand the result to `onControlDone`.
    case armCrash([String: JSONValue], answering: PendingControl)
    /// The `stop` command: the shell finishes after this step.
    case stop
    /// Write an event (after everything before it in the list has been carried out).
    case log(EventLine)
    /// Write one of the events every pass writes, typed (`PassEvent`), likewise in order.
    case event(PassEvent)
}
