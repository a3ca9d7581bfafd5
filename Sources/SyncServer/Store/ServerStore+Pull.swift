import SQLite
import SyncProtocol

extension ServerStore {
    /// The changes of `account` after `cursor`, in seq order: at most `limit`, and never more than fits in one page
    /// body (at least one change always does). A cursor beyond the head is refused: the device's cursor claims
    /// changes this server never recorded, so it must not be silently served an empty page.
    /// The same pull again (same account, cursor and limit, no apply since) is answered from `pageCache`.
    public func pull(account: String, cursor: Int, limit: Int) throws(ServerError) -> PageSlice {
        if let cached = pageCache.slice(account: account, cursor: cursor, limit: limit) { return cached }
        let slice = try read(account: account, cursor: cursor, limit: limit)
        pageCache.store(slice, account: account, cursor: cursor, limit: limit)
        return slice
    }

    func read(account: String, cursor: Int, limit: Int) throws(ServerError) -> PageSlice {
        do {
            let head = try database.scalarInt("SELECT head FROM accounts WHERE id = ?", account) ?? 0
            guard cursor <= head else { throw ServerError.cursorAhead(account: account, cursor: cursor, head: head) }
            var changes: [Change] = []
            changes.reserveCapacity(min(max(limit, 0), 1_024))
            // Sizes are counted exactly only once their cheap upper bounds could pass the budget: until then every
            // change fits however it is counted, so the page is the same as counting each one exactly.
            var budget = PageSlice.changeBudget
            var bounded = 0
            var exact = false
            let sql = """
                SELECT seq, draft, action, version, title, body, origin, op_key, conflict
                FROM changes WHERE account = ? AND seq > ? ORDER BY seq LIMIT ?
                """
            var full = false
            try database.forEach(sql, account, cursor, max(limit, 0)) { row in
                guard !full else { return }
                let change = Change(
                    seq: row.int(0), draft: row.string(1), action: DraftAction(rawValue: row.string(2)) ?? .update,
                    version: row.int(3), title: row.optionalString(4), body: row.optionalString(5),
                    origin: row.string(6), key: row.string(7), conflict: row.bool(8)
                )
                if !exact {
                    bounded += PageSlice.sizeBound(of: change)
                    if bounded <= PageSlice.changeBudget {
                        changes.append(change)
                        return
                    }
                    exact = true
                    for counted in changes { budget -= PageSlice.encodedSize(of: counted) }
                }
                let size = PageSlice.encodedSize(of: change)
                if !changes.isEmpty && size > budget {
                    full = true
                    return
                }
                budget -= size
                changes.append(change)
            }
            return PageSlice(changes: changes, next: changes.last?.seq ?? cursor, head: head)
        } catch {
            throw ServerError.wrap(error)
        }
    }
}
