import SyncDevice
import SyncProtocol
import SyncServer

/// Cursor safety on one device's files: the shadow must be the server's changes replayed up to the cursor.
enum CursorCheck {
    /// The replay of `changes` with seq ≤ `cursor`, by the rules `Ledger.apply` uses.
    static func replay(_ changes: [ServerSnapshot.ChangeRow], upTo cursor: Int) -> [String: DraftRow] {
        var rows: [String: DraftRow] = [:]
        for change in changes where change.seq <= cursor {
            let old = rows[change.draft]
            switch change.action {
            case .create:
                rows[change.draft] = DraftRow(id: change.draft, title: change.title, body: change.body,
                                              version: change.version, deleted: false)
            case .update:
                rows[change.draft] = DraftRow(id: change.draft, title: change.title ?? old?.title,
                                              body: change.body ?? old?.body, version: change.version, deleted: false)
            case .delete:
                rows[change.draft] = DraftRow(id: change.draft, title: old?.title, body: old?.body,
                                              version: change.version, deleted: true)
            }
        }
        return rows
    }

    /// nil when the cursor and shadow are consistent with the server's changes; else what is wrong, naming the first
    /// change the cursor passed without the shadow holding it.
    static func problem(cursor: Int, shadow: [DraftRow], changes: [ServerSnapshot.ChangeRow]) -> String? {
        let head = changes.last?.seq ?? 0
        if cursor > head { return "cursor \(cursor) is beyond the server's head \(head)" }
        let expected = replay(changes, upTo: cursor)
        let held = Dictionary(shadow.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var wrong: [String] = []
        for id in Set(expected.keys).union(held.keys).sorted() where expected[id] != held[id] {
            wrong.append(id)
        }
        guard let first = wrong.first else { return nil }
        let last = changes.last { $0.seq <= cursor && $0.draft == first }
        let mine = held[first].map { describe($0, against: expected[first]) } ?? "nothing"
        let should = expected[first].map { describe($0, against: held[first]) } ?? "nothing"
        var text = "cursor \(cursor), but its shadow holds \(mine) of draft \(first) where the server's changes up to "
            + "\(cursor) give \(should)"
        if let last { text += " (change seq \(last.seq), key \(last.key))" }
        text += ": the cursor passed a change that was not durably applied"
        if wrong.count > 1 { text += "; \(wrong.count) drafts differ" }
        return text
    }

    /// A row as the message shows it: its version and deletion, and the fields that differ from `other` when
    /// version and deletion alone would read the same ("v5 title "a"" against "v5 title "b"").
    static func describe(_ row: DraftRow, against other: DraftRow?) -> String {
        var text = "v\(row.version)\(row.deleted ? " deleted" : "")"
        guard let other, other.version == row.version, other.deleted == row.deleted else { return text }
        if row.title != other.title { text += " title \(quoted(row.title))" }
        if row.body != other.body { text += " body \(quoted(row.body))" }
        return text
    }

    private static func quoted(_ value: String?) -> String {
        guard let value else { return "(none)" }
        return "\"" + (value.count > 40 ? String(value.prefix(40)) + "…" : value) + "\""
    }
}
