import LabKit
import SyncProtocol

/// The switch `pageCommit: atPassEnd` (seed 001: "A small pass fits inside the 30 seconds of an iOS refresh task; a
/// large one is cut off and starts over"): a pass keeps the pages it pulls in memory and applies them all when it
/// ends, so one cut off before its end keeps nothing and the next pulls the same pages again. The lab's design
/// (`perPage`) applies each page with its cursor as it goes, so a cut-off pass keeps what it finished.
extension DeviceInstance {
    /// Works through a page (its `pageCostSec`) without applying it: the in-memory cursor moves so the next pull
    /// asks for what follows; the ledger's cursor does not.
    mutating func holdUntilPassEnd(_ accepted: [Change], to last: Int, pageHead: Int, now: Double)
        -> [DeviceDirective]
    {
        guard var current = pass else { return [] }
        charge(&current, settings.pageCostSec)
        current.heldPages.append(PageApplication(changes: accepted, from: cursor, to: last, pass: current.id))
        cursor = last
        current.pulled += accepted.count
        current.reachedHead = cursor >= pageHead
        pass = current
        if passExpired(now: now) { return expire(now: now) }
        return afterPage(empty: false, now: now)
    }

    /// At the pass's end: its held pages applied, in order (`keep`), or discarded with the cursor put back where
    /// the ledger has it (`pages.discarded`). Nothing when the pass held none.
    mutating func settleHeldPages(keep: Bool) -> [DeviceDirective] {
        guard var current = pass, let first = current.heldPages.first, let last = current.heldPages.last else {
            return []
        }
        let held = current.heldPages
        current.heldPages = []
        guard keep else {
            cursor = first.from
            current.pulled -= held.reduce(0) { $0 + $1.changes.count }
            pass = current
            return [.log(EventLine(.pagesDiscarded, [
                ("pass", .int(current.id)), ("pages", .int(held.count)), ("from", .int(first.from)),
                ("to", .int(last.to)),
                ("reason", .string("pageCommit=atPassEnd: the pass was cut off before its one commit; the next "
                    + "pass starts over from cursor \(first.from)")),
            ]))]
        }
        var out = recordStart(&current)
        pass = current
        for page in held {
            out.append(.applyPage(page))
            for change in page.changes {
                out.append(.event(.changeApplied(change, pass: current.id, trigger: current.trigger)))
            }
            out.append(.event(.cursorMoved(from: page.from, to: page.to, pass: current.id)))
        }
        return out
    }
}
