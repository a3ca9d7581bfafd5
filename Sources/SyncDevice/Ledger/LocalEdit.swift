import SyncProtocol

/// A user's edit of a draft as the `edit` control command gives it, checked before anything is written.
public struct LocalEdit: Sendable, Equatable {
    public var draft: String
    public var action: DraftAction
    public var title: String?
    public var body: String?

    /// The largest body the device accepts: a push of one op must fit in a frame (`Limits.maxBodyBytes`). Bodies
    /// over the server's own limit are accepted here and end `needsAttention` when the server rejects them.
    public static let maxBodyBytes = 256 * 1024

    public init(draft: String, action: DraftAction, title: String? = nil, body: String? = nil) {
        self.draft = draft
        self.action = action
        self.title = title
        self.body = body
    }

    /// Reads `{draft, action: create|update|delete, title?, body?}`.
    public static func parse(_ args: [String: JSONValue]) throws(DeviceError) -> LocalEdit {
        func fail(_ reason: String) -> DeviceError { .badArguments(command: "edit", reason: reason) }
        for key in args.keys where !["draft", "action", "title", "body"].contains(key) {
            throw fail("unknown argument \"\(key)\" (expected draft, action, title, body)")
        }
        guard let draft = args["draft"]?.stringValue else { throw fail("\"draft\" must be a string") }
        guard !draft.isEmpty, draft.utf8.count <= Limits.maxIDBytes else {
            throw fail("\"draft\" must be 1…\(Limits.maxIDBytes) bytes")
        }
        guard let actionText = args["action"]?.stringValue, let action = DraftAction(rawValue: actionText) else {
            throw fail("\"action\" must be create, update or delete")
        }
        func text(_ key: String) throws(DeviceError) -> String? {
            guard let value = args[key], value != .null else { return nil }
            guard let string = value.stringValue else { throw fail("\"\(key)\" must be a string") }
            return string
        }
        let title = try text("title")
        let body = try text("body")
        if let body, body.utf8.count > maxBodyBytes {
            throw fail("\"body\" is \(body.utf8.count) bytes; this device sends at most \(maxBodyBytes)")
        }
        if let title, title.utf8.count > maxBodyBytes {
            throw fail("\"title\" is \(title.utf8.count) bytes; this device sends at most \(maxBodyBytes)")
        }
        if action == .delete && (title != nil || body != nil) {
            throw fail("a delete carries no title or body")
        }
        return LocalEdit(draft: draft, action: action, title: title, body: body)
    }
}
