import LabKit
import SyncProtocol

/// A pulled page: applied (never past a gap), then the next pull or the end (DeviceInstance+Pass.swift).
extension DeviceInstance {
    /// Applies the contiguous run of new changes in a page (never past a gap: the cursor must not pass a change
    /// that was not applied), then pulls again or ends.
    mutating func apply(_ page: Page, now: Double) -> [DeviceDirective] {
        guard var current = pass else { return [] }
        current.pages += 1
        head = max(head, page.head)
        var expected = cursor + 1
        var accepted: [Change] = []
        var gapAt: Int?
        for change in page.changes.sorted(by: { $0.seq < $1.seq }) {
            if change.seq < expected { continue }  // already applied: a page pulled again after a cut-off
            guard change.seq == expected else {
                gapAt = change.seq
                break
            }
            accepted.append(change)
            expected += 1
        }
        var out: [DeviceDirective] = []
        if let last = accepted.last, settings.cursorCommit == .beforePage {
            // The switch `cursorCommit: beforePage`: the cursor is committed now, on its own; the page is applied once
            // its work (`pageCostSec` of execution) is done. A kill in between loses the page for good.
            let application = PageApplication(changes: accepted, from: cursor, to: last.seq, pass: current.id,
                                              cursorCommitted: true)
            out += recordStart(&current)
            out.append(.commitCursor(to: last.seq, pass: current.id))
            // The cursor really moves now, past changes not yet applied: cursor-safety sees exactly that.
            out.append(.event(.cursorMoved(from: cursor, to: last.seq, pass: current.id)))
            out.append(.log(EventLine(.cursorCommittedBeforePage, [
                ("from", .int(cursor)), ("to", .int(last.seq)), ("pass", .int(current.id)),
                ("reason", "cursorCommit=beforePage: the page is applied in a later commit"),
            ])))
            cursor = last.seq
            current.pendingPage = RunningPass.PendingPage(page: application,
                                                          due: now + settings.pageCostSec * settings.executionScale,
                                                          head: page.head)
            pass = current
            return out
        }
        if let last = accepted.last, settings.pageCommit == .atPassEnd {
            return holdUntilPassEnd(accepted, to: last.seq, pageHead: page.head, now: now)
        }
        if !accepted.isEmpty {
            // Applying the page costs execution: when that runs the window out, the page is not applied (the work
            // never finished); the next pass pulls it again from the unchanged cursor.
            charge(&current, settings.pageCostSec)
            pass = current
            if passExpired(now: now) { return expire(now: now) }
        }
        // A pass whose claim deferred its row writes it with this page, unless it ends in this same step: then its
        // end makes the row (one statement instead of two, in the same commit).
        let rowDeferred = !current.recorded && !accepted.isEmpty
        current.recorded = current.recorded || !accepted.isEmpty
        if let last = accepted.last {
            let from = cursor
            out.append(.applyPage(PageApplication(changes: accepted, from: from, to: last.seq, pass: current.id)))
            for change in accepted {
                out.append(.event(.changeApplied(change, pass: current.id, trigger: current.trigger)))
            }
            out.append(.event(.cursorMoved(from: from, to: last.seq, pass: current.id)))
            cursor = last.seq
            current.pulled += accepted.count
        }
        current.reachedHead = cursor >= page.head
        pass = current
        if let gapAt {
            out.append(.log(EventLine(.pageGap, [("expected", .int(expected)), ("got", .int(gapAt)),
                                                 ("pass", .int(current.id))])))
            return out + endPass(outcome: .error, now: now)
        }
        let rest = afterPage(empty: accepted.isEmpty, now: now)
        let ends = rest.contains { if case .endPass(let record) = $0 { record.id == current.id } else { false } }
        if rowDeferred && !ends {
            out.insert(.beginPass(id: current.id, trigger: current.trigger, at: current.started), at: 0)
        }
        return out + rest
    }

    /// The pass's row, when its claim deferred it: written in the transaction of the page about to be applied, so
    /// a receiving pass commits once (page, cursor, its row and, when it ends there, its end).
    func recordStart(_ current: inout RunningPass) -> [DeviceDirective] {
        guard !current.recorded else { return [] }
        current.recorded = true
        return [.beginPass(id: current.id, trigger: current.trigger, at: current.started)]
    }

    /// After a page: done, out of page budget, out of execution time, or pull the next.
    mutating func afterPage(empty: Bool, now: Double) -> [DeviceDirective] {
        guard let current = pass else { return [] }
        if current.reachedHead || empty {
            return endPass(outcome: .completed, now: now)
        }
        if current.pages >= settings.maxPages {
            pass?.workRemains = true
            return endPass(outcome: .completed, now: now)
        }
        if passExpired(now: now) { return expire(now: now) }
        return proceed(to: .pull, now: now)
    }

    /// `cursorCommit: beforePage`: the page whose cursor was committed first is applied now that its work is done.
    mutating func applyPendingPage(now: Double) -> [DeviceDirective] {
        guard var current = pass, let pending = current.pendingPage else { return [] }
        current.pendingPage = nil
        let application = pending.page
        var out: [DeviceDirective] = [.applyPage(application)]
        for change in application.changes {
            out.append(.event(.changeApplied(change, pass: current.id, trigger: current.trigger)))
        }
        current.pulled += application.changes.count
        current.reachedHead = cursor >= pending.head
        charge(&current, settings.pageCostSec)
        pass = current
        return out + afterPage(empty: false, now: now)
    }
}
