import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncProtocol
import Testing

@testable import SyncServer

@Suite("ServerStore")
struct ServerStoreTests {
    let folder = TempFolder()

    func makeStore() throws -> ServerStore {
        let store = try ServerStore(path: folder.file("server.sqlite"), synchronous: .normal)
        try store.load(AccountsFile(accounts: [
            .init(id: "acme", devices: [.init(id: "pixel", platform: .android, token: "t1"),
                                        .init(id: "iphone", platform: .ios, token: "t2")]),
            .init(id: "globex", devices: [.init(id: "laptop", platform: .web, token: "t3")]),
        ]))
        return store
    }

    @Test("replaying the same op 100 times yields one change and 100 identical results")
    func replayIsIdempotent() throws {
        let store = try makeStore()
        let op = Op(key: "k-1", draft: "d1", action: .create, base: 0, title: "Hello", body: "first")
        let first = try store.apply(device: "pixel", account: "acme", ops: [op])
        #expect(first.map(\.result) == [OpResult(key: "k-1", outcome: .applied, seq: 1, version: 1, conflict: false)])

        var replays: [OpResult] = []
        for _ in 0..<100 {
            replays += try store.apply(device: "pixel", account: "acme", ops: [op]).map(\.result)
        }
        #expect(replays.count == 100)
        #expect(Set(replays.map { "\($0)" }).count == 1)
        #expect(replays[0] == OpResult(key: "k-1", outcome: .duplicate, seq: 1, version: 1, conflict: false))

        #expect(try store.database.scalarInt("SELECT count(*) FROM changes") == 1)
        #expect(try store.database.scalarInt("SELECT count(*) FROM applied_ops") == 1)
        #expect(try store.head(account: "acme") == 1)
        #expect(try store.draft(account: "acme", id: "d1")?.version == 1)
    }

    @Test("a page is read and encoded once for the pulls that follow; an apply drops it; the cache is bounded")
    func pageCache() throws {
        let store = try makeStore()
        for n in 1...3 {
            let op = Op(key: "k\(n)", draft: "d\(n)", action: .create, base: 0, title: "t", body: "b")
            _ = try store.apply(device: "pixel", account: "acme", ops: [op])
        }
        let cache = store.pageCache
        let first = try store.pull(account: "acme", cursor: 1, limit: 10)
        let second = try store.pull(account: "acme", cursor: 1, limit: 10)
        #expect(first == second && cache.hits == 1 && cache.misses == 1)
        // Another cursor or another limit is another page.
        _ = try store.pull(account: "acme", cursor: 2, limit: 10)
        _ = try store.pull(account: "acme", cursor: 1, limit: 1)
        #expect(cache.hits == 1 && cache.misses == 3)
        // The body from the cached prefix is the bytes the page encodes to, for any req.
        for req in [0, 7, 12_345, -3] {
            let page = Page(req: req, changes: first.changes, next: first.next, head: first.head)
            #expect(cache.body(of: page, account: "acme", cursor: 1, limit: 10) == Codec.body(of: .page(page)))
        }
        // A page that is not the cached one is encoded as it is.
        let other = Page(req: 1, changes: Array(first.changes.prefix(1)), next: 2, head: 3)
        #expect(cache.body(of: other, account: "acme", cursor: 1, limit: 10) == Codec.body(of: .page(other)))
        // An apply to the account drops its pages: the next pull reads the new head and change.
        _ = try store.apply(device: "pixel", account: "acme",
                            ops: [Op(key: "k4", draft: "d4", action: .create, base: 0, title: "t", body: "b")])
        let after = try store.pull(account: "acme", cursor: 1, limit: 10)
        #expect(after.changes.map(\.seq) == [2, 3, 4] && after.head == 4 && cache.misses == 4)
        // Bounded: the oldest entries go.
        let small = PageCache(maxEntries: 2)
        for cursor in 0..<3 {
            small.store(PageSlice(changes: [], next: cursor, head: 3), account: "a", cursor: cursor, limit: 5)
        }
        #expect(small.count == 2)
        #expect(small.slice(account: "a", cursor: 0, limit: 5) == nil)
        #expect(small.slice(account: "a", cursor: 2, limit: 5) != nil)
    }

    @Test("a replay in the same batch as its first send is a duplicate too")
    func replayWithinBatch() throws {
        let store = try makeStore()
        let op = Op(key: "k", draft: "d", action: .create, base: 0, title: "t", body: "b")
        let results = try store.apply(device: "pixel", account: "acme", ops: [op, op]).map(\.result)
        #expect(results.map(\.outcome) == [.applied, .duplicate])
        #expect(results[1].seq == 1)
        #expect(try store.head(account: "acme") == 1)
    }

    @Test("1,000 changes pulled with page limit 37 arrive once each, in order, and the cursor ends at head")
    func pagination() throws {
        let store = try makeStore()
        for batch in 0..<10 {
            let ops = (0..<100).map { i -> Op in
                let n = batch * 100 + i
                return Op(key: "k\(n)", draft: "d\(n % 7)", action: .update, base: 0, title: "t\(n)", body: "b\(n)")
            }
            _ = try store.apply(device: "pixel", account: "acme", ops: ops)
        }
        var cursor = 0
        var seen: [Int] = []
        var pages = 0
        while true {
            let page = try store.pull(account: "acme", cursor: cursor, limit: 37)
            #expect(page.head == 1_000)
            #expect(page.changes.count <= 37)
            if page.changes.isEmpty {
                #expect(page.next == cursor)
                break
            }
            #expect(page.next == page.changes.last?.seq)
            seen += page.changes.map(\.seq)
            cursor = page.next
            pages += 1
            #expect(pages <= 28, "pagination does not end")
            if pages > 28 { break }
        }
        #expect(seen == Array(1...1_000))
        #expect(cursor == 1_000)
        #expect(pages == 28)  // 27 full pages of 37, then 1
    }

    @Test("a page stops before its body would pass the protocol's size limit")
    func pageByteBudget() throws {
        let store = try makeStore()
        let big = String(repeating: "x", count: Limits.maxDraftBodyBytes)
        let ops = (0..<40).map { Op(key: "big\($0)", draft: "d\($0)", action: .create, base: 0, title: "t", body: big) }
        _ = try store.apply(device: "pixel", account: "acme", ops: ops)
        let page = try store.pull(account: "acme", cursor: 0, limit: 1_000)
        #expect(!page.changes.isEmpty && page.changes.count < 40)
        let encoded = Codec.encode(.page(Page(req: 1, changes: page.changes, next: page.next, head: page.head)))
        #expect(encoded[1].count <= Limits.maxBodyBytes)
        #expect(try Codec.decode(encoded) == .page(Page(req: 1, changes: page.changes, next: page.next,
                                                      head: page.head)))
    }

    @Test("two devices edit the same draft from the same base: the conflict is recorded and counted, replicas converge")
    func concurrentEditsConverge() throws {
        let store = try makeStore()
        _ = try store.apply(device: "pixel", account: "acme",
                            ops: [Op(key: "c", draft: "note", action: .create, base: 0, title: "Note", body: "v1")])
        // Both replicas pull the create, then edit version 1 while offline.
        var pixel = Replica()
        var iphone = Replica()
        pixel.apply(try store.pull(account: "acme", cursor: 0, limit: 100).changes)
        iphone.apply(try store.pull(account: "acme", cursor: 0, limit: 100).changes)
        #expect(pixel.drafts["note"]?.version == 1 && iphone.drafts["note"]?.version == 1)

        let fromPixel = try store.apply(device: "pixel", account: "acme", ops: [
            Op(key: "p1", draft: "note", action: .update, base: 1, body: "pixel's edit"),
        ]).map(\.result)
        let fromIphone = try store.apply(device: "iphone", account: "acme", ops: [
            Op(key: "i1", draft: "note", action: .update, base: 1, title: "iPhone title", body: "iphone's edit"),
        ]).map(\.result)
        #expect(fromPixel == [OpResult(key: "p1", outcome: .applied, seq: 2, version: 2, conflict: false)])
        #expect(fromIphone == [OpResult(key: "i1", outcome: .applied, seq: 3, version: 3, conflict: true)])

        pixel.apply(try store.pull(account: "acme", cursor: pixel.cursor, limit: 100).changes)
        iphone.apply(try store.pull(account: "acme", cursor: iphone.cursor, limit: 100).changes)
        let server = try #require(try store.draft(account: "acme", id: "note"))
        #expect(pixel.drafts == iphone.drafts)
        #expect(pixel.drafts["note"] == Replica.Draft(title: "iPhone title", body: "iphone's edit", version: 3,
                                                      deleted: false))
        #expect(server.title == "iPhone title" && server.body == "iphone's edit" && server.version == 3)
        #expect(try store.database.scalarInt("SELECT count(*) FROM changes WHERE conflict = 1") == 1)
        #expect(try store.database.scalarInt("SELECT seq FROM changes WHERE conflict = 1") == 3)
    }

    @Test("permanent refusals: oversized title or body, delete of an unknown draft, a key another device used")
    func rejections() throws {
        let store = try makeStore()
        let longTitle = String(repeating: "t", count: Limits.maxTitleBytes + 1)
        let longBody = String(repeating: "b", count: Limits.maxDraftBodyBytes + 1)
        let results = try store.apply(device: "pixel", account: "acme", ops: [
            Op(key: "a", draft: "d", action: .create, base: 0, title: longTitle),
            Op(key: "b", draft: "d", action: .create, base: 0, body: longBody),
            Op(key: "c", draft: "missing", action: .delete, base: 0),
            Op(key: "d", draft: "d", action: .create, base: 0, title: "ok", body: "ok"),
        ]).map(\.result)
        #expect(results.map(\.outcome) == [.rejected, .rejected, .rejected, .applied])
        #expect(results[0].reason?.hasPrefix("too large: title") == true)
        #expect(results[1].reason?.hasPrefix("too large: body") == true)
        #expect(results[2].reason == "unknown draft \"missing\"")

        // A refused op stays refused when resent; the same key from another device changes nothing.
        let again = try store.apply(device: "pixel", account: "acme",
                                    ops: [Op(key: "c", draft: "missing", action: .delete, base: 0)]).map(\.result)
        #expect(again == [results[2]])
        let stolen = try store.apply(device: "iphone", account: "acme",
                                     ops: [Op(key: "d", draft: "x", action: .create, base: 0)]).map(\.result)
        #expect(stolen.first?.outcome == .rejected)
        #expect(try store.head(account: "acme") == 1)
        // Keys are scoped by account: the same key in another account is another op, applied there.
        let elsewhere = try store.apply(device: "laptop", account: "globex",
                                        ops: [Op(key: "d", draft: "x", action: .create, base: 0)]).map(\.result)
        #expect(elsewhere.first?.outcome == .applied)
        #expect(try store.head(account: "globex") == 1)
        #expect(try store.head(account: "acme") == 1)
    }

    @Test("delete, then a late edit of the deleted draft: the edit wins and is a conflict")
    func deleteThenEdit() throws {
        let store = try makeStore()
        _ = try store.apply(device: "pixel", account: "acme", ops: [
            Op(key: "1", draft: "n", action: .create, base: 0, title: "T", body: "B"),
            Op(key: "2", draft: "n", action: .delete, base: 1),
        ])
        let late = try store.apply(device: "iphone", account: "acme",
                                   ops: [Op(key: "3", draft: "n", action: .update, base: 1, body: "late")])
        #expect(late.map(\.result) == [OpResult(key: "3", outcome: .applied, seq: 3, version: 3, conflict: true)])
        #expect(late.first?.change?.action == .create)
        let page = try store.pull(account: "acme", cursor: 0, limit: 10)
        #expect(page.changes.map(\.action) == [.create, .delete, .create])
        #expect(page.changes[1].title == nil && page.changes[1].body == nil)
        var replica = Replica()
        replica.apply(page.changes)
        #expect(replica.drafts["n"] == Replica.Draft(title: "", body: "late", version: 3, deleted: false))
    }

    @Test("a cursor beyond the head is refused; accounts do not see each other's changes")
    func cursorAheadAndIsolation() throws {
        let store = try makeStore()
        _ = try store.apply(device: "pixel", account: "acme",
                            ops: [Op(key: "k", draft: "d", action: .create, base: 0, title: "secret")])
        #expect(throws: ServerError.cursorAhead(account: "acme", cursor: 5, head: 1)) {
            _ = try store.pull(account: "acme", cursor: 5, limit: 10)
        }
        let other = try store.pull(account: "globex", cursor: 0, limit: 10)
        #expect(other.changes.isEmpty && other.head == 0 && other.next == 0)
    }

    @Test("injected rejections refuse only new ops and are remembered")
    func injectedRejections() throws {
        let store = try makeStore()
        let a = Op(key: "a", draft: "d", action: .create, base: 0, title: "t")
        _ = try store.apply(device: "pixel", account: "acme", ops: [a])
        let b = Op(key: "b", draft: "d", action: .update, base: 1, title: "u")
        let results = try store.apply(device: "pixel", account: "acme", ops: [a, b], injectRejections: [0, 1])
        #expect(results.map(\.result.outcome) == [.duplicate, .rejected])
        #expect(results[1].result.reason == ServerFaults.injectedReason && !results[1].replay)
        let resent = try store.apply(device: "pixel", account: "acme", ops: [b])
        #expect(resent[0].result.outcome == .rejected && resent[0].replay)
        #expect(try store.head(account: "acme") == 1)
    }

    @Test("devices: the accounts file loads idempotently, tokens rotate, a device cannot move account")
    func devices() throws {
        let store = try makeStore()
        let store2 = try makeStore()  // loading again changes nothing
        #expect(try store2.devices().count == 3)
        try store.addDevice(DeviceRecord(id: "pixel", account: "acme", platform: .android, token: "rotated"))
        // Stored hashed, never in clear; the rotated token matches it.
        let stored = try store.devices().first(where: { $0.id == "pixel" })?.token ?? ""
        #expect(stored.hasPrefix("sha256:") && !stored.contains("rotated"))
        #expect(TokenHash.matches(stored: stored, presented: "rotated"))
        #expect(!TokenHash.matches(stored: stored, presented: "t-pixel"))
        #expect(throws: ServerError.deviceMoved(device: "pixel", from: "acme", to: "globex")) {
            try store.addDevice(DeviceRecord(id: "pixel", account: "globex", platform: .android, token: "x"))
        }
        try store.addDevice(DeviceRecord(id: "tablet", account: "initech", platform: .web, token: "t"))
        #expect(try store.heads() == ["acme": 0, "globex": 0, "initech": 0])
        #expect(try store.integrityCheck() == "ok")
    }
}
