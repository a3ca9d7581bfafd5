import SyncProtocol

/// The pages the store read lately, each with its body encoded once: when N devices of an account are hinted to the
/// same change, they pull from the same cursor at the same head, and all but the first are served from here without
/// reading SQLite or encoding the page again (docs/PERFORMANCE.md). Keyed by account, cursor and page limit; an
/// entry holds the head it was read at, and every write to an account's changes (`ServerStore.apply`) drops that
/// account's entries first, so an entry is always the page a read would give now. Bounded: at most `maxEntries`
/// entries and `maxBytes` of encoded bodies; the oldest go first. Belongs to the server's IO thread, as the store.
public final class PageCache {
    struct Key: Hashable {
        let account: String
        let cursor: Int
        let limit: Int
    }

    struct Entry {
        let slice: PageSlice
        /// The page's body up to its last value, `{"changes":[…],"head":H,"next":N,"req":` (each pull has its req).
        var prefix: [UInt8]?
    }

    public let maxEntries: Int
    public let maxBytes: Int
    private var entries: [Key: Entry] = [:]
    /// Insertion order, for eviction; keys of dropped entries are skipped when met.
    private var order: [Key] = []
    private var bytes = 0
    /// Pulls answered from here, and pages read from the store (for tests and the bench's figures).
    public private(set) var hits = 0
    public private(set) var misses = 0

    public init(maxEntries: Int = 256, maxBytes: Int = 8 << 20) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    public var count: Int { entries.count }

    /// The page read earlier for this pull, if the account has not changed since.
    func slice(account: String, cursor: Int, limit: Int) -> PageSlice? {
        guard let entry = entries[Key(account: account, cursor: cursor, limit: limit)] else {
            misses += 1
            return nil
        }
        hits += 1
        return entry.slice
    }

    /// Remembers a page just read from the store.
    func store(_ slice: PageSlice, account: String, cursor: Int, limit: Int) {
        let key = Key(account: account, cursor: cursor, limit: limit)
        if let old = entries[key] { bytes -= Self.size(old) }
        let entry = Entry(slice: slice, prefix: nil)
        entries[key] = entry
        order.append(key)
        bytes += Self.size(entry)
        evict()
    }

    /// The encoded body of `page` (a reply to a pull of `account` at `cursor` with `limit`): the cached prefix with
    /// the req appended when the page is the cached one (equal content), else encoded as any message.
    func body(of page: Page, account: String, cursor: Int, limit: Int) -> [UInt8] {
        let key = Key(account: account, cursor: cursor, limit: limit)
        guard var entry = entries[key], entry.slice.head == page.head, entry.slice.next == page.next,
            entry.slice.changes == page.changes
        else { return Codec.body(of: .page(page)) }
        if entry.prefix == nil {
            entry.prefix = Codec.pageBodyPrefix(changes: page.changes, head: page.head, next: page.next)
            bytes += entry.prefix?.count ?? 0
            entries[key] = entry
        }
        let body = Codec.pageBody(prefix: entry.prefix ?? [], req: page.req)
        evict()
        return body
    }

    /// Drops every page of `account`: its changes or head are about to move.
    func invalidate(account: String) {
        guard !entries.isEmpty else { return }
        for key in entries.keys where key.account == account {
            if let entry = entries.removeValue(forKey: key) { bytes -= Self.size(entry) }
        }
        if entries.isEmpty {
            order.removeAll(keepingCapacity: true)
        } else if order.count > 4 * maxEntries {
            order.removeAll { entries[$0] == nil }
        }
    }

    private func evict() {
        var index = 0
        while entries.count > maxEntries || bytes > maxBytes, index < order.count {
            if let entry = entries.removeValue(forKey: order[index]) { bytes -= Self.size(entry) }
            index += 1
        }
        if index > 0 { order.removeFirst(index) }
    }

    /// What an entry holds, roughly: its changes' strings and their fixed part, and its encoded prefix.
    private static func size(_ entry: Entry) -> Int {
        var size = 64 + (entry.prefix?.count ?? 0)
        for change in entry.slice.changes { size += PageSlice.sizeBound(of: change) / 6 + PageSlice.fixedSize }
        return size
    }
}
