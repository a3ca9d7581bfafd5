/// The body of each message on the wire. Field names are the JSON keys; `fields` lists every key a body may carry,
/// and the decoder rejects any other (a hint that carried a draft's body would be refused, not ignored).
public protocol MessageBody: Codable, Sendable, Equatable {
    static var fields: Set<String> { get }
    /// Checks what the types cannot say (non-empty ids, bounds); throws `ProtocolError.invalidValue`.
    func validate() throws(ProtocolError)
}

extension MessageBody {
    public func validate() throws(ProtocolError) {}
}

/// Device platforms.
public enum Platform: String, Codable, Sendable, CaseIterable {
    case android, ios, web
}

/// What a user did to a draft.
public enum DraftAction: String, Codable, Sendable, CaseIterable {
    case create, update, delete
}

// MARK: - Device → server

/// device → server: who I am. Answered with `welcome` or `error`.
public struct Hello: MessageBody {
    public var device: String
    public var account: String
    public var token: String
    public var platform: Platform
    public static let fields: Set<String> = ["device", "account", "token", "platform"]

    public init(device: String, account: String, token: String, platform: Platform) {
        self.device = device
        self.account = account
        self.token = token
        self.platform = platform
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(device, "hello", "device")
        try Limits.checkID(account, "hello", "account")
        try Limits.checkID(token, "hello", "token")
    }
}

/// server → device: hello accepted.
public struct Welcome: MessageBody {
    public var device: String
    public var account: String
    public var head: Int
    public static let fields: Set<String> = ["device", "account", "head"]

    public init(device: String, account: String, head: Int) {
        self.device = device
        self.account = account
        self.head = head
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(device, "welcome", "device")
        try Limits.checkID(account, "welcome", "account")
        guard head >= 0 else { throw .invalidValue(type: "welcome", field: "head", reason: "is negative") }
    }
}

/// One user intent, sent with the idempotency key it was created with.
public struct Op: Codable, Sendable, Equatable {
    /// Idempotency key: created with the op on the device, reused on every resend.
    public var key: String
    public var draft: String
    public var action: DraftAction
    /// The draft version the edit was made on (0 for a create).
    public var base: Int
    public var title: String?
    public var body: String?

    /// Every key an op may carry; any other is refused.
    public static let fields: Set<String> = ["key", "draft", "action", "base", "title", "body"]

    public init(key: String, draft: String, action: DraftAction, base: Int, title: String? = nil, body: String? = nil) {
        self.key = key
        self.draft = draft
        self.action = action
        self.base = base
        self.title = title
        self.body = body
    }
}

/// device → server: a bounded batch of ops. Answered with `pushResult`.
///
/// Optional `cursor` and `limit` (both or neither, as a `pull`'s) ask for the page after `cursor` with the results:
/// the server reads it after the push's commit and puts it in `pushResult.page`, so a sending pass needs no pull
/// round trip for its own changes (PROTOCOL.md, "A push that pulls").
public struct Push: MessageBody {
    public var req: Int
    public var ops: [Op]
    /// The cursor to read the answer's page from; nil: no page wanted.
    public var cursor: Int?
    /// The page's size, as a pull's `limit`; set exactly when `cursor` is.
    public var limit: Int?
    public static let fields: Set<String> = ["req", "ops", "cursor", "limit"]

    public init(req: Int, ops: [Op], cursor: Int? = nil, limit: Int? = nil) {
        self.req = req
        self.ops = ops
        self.cursor = cursor
        self.limit = limit
    }

    public func validate() throws(ProtocolError) {
        guard !ops.isEmpty else { throw .invalidValue(type: "push", field: "ops", reason: "is empty") }
        switch (cursor, limit) {
        case (nil, nil):
            break
        case (let cursor?, let limit?):
            guard cursor >= 0 else { throw .invalidValue(type: "push", field: "cursor", reason: "is negative") }
            guard (1...Limits.maxPageLimit).contains(limit) else {
                let reason = "must be 1...\(Limits.maxPageLimit), got \(limit)"
                throw .invalidValue(type: "push", field: "limit", reason: reason)
            }
        case (nil, _?):
            throw .invalidValue(type: "push", field: "cursor", reason: "is missing (limit asks for a page from it)")
        case (_?, nil):
            throw .invalidValue(type: "push", field: "limit", reason: "is missing (cursor asks for a page)")
        }
        guard ops.count <= Limits.maxOpsPerPush else {
            let reason = "has \(ops.count) ops, limit \(Limits.maxOpsPerPush)"
            throw .invalidValue(type: "push", field: "ops", reason: reason)
        }
        for (index, op) in ops.enumerated() {
            try Limits.checkID(op.key, "push", "ops[\(index)].key")
            try Limits.checkID(op.draft, "push", "ops[\(index)].draft")
            guard op.base >= 0 else {
                throw .invalidValue(type: "push", field: "ops[\(index)].base", reason: "is negative")
            }
        }
    }
}

/// How the server settled one op.
public enum Outcome: String, Codable, Sendable {
    /// Applied now, as change `seq`.
    case applied
    /// A replay of an op already applied: the original result, nothing changed.
    case duplicate
    /// Permanent: resending will not help (`reason` says why).
    case rejected
    /// Transient: send again later with the same key.
    case retryLater
}

public struct OpResult: Codable, Sendable, Equatable {
    public var key: String
    public var outcome: Outcome
    public var seq: Int?
    public var version: Int?
    public var conflict: Bool?
    public var reason: String?

    /// Every key a result may carry; any other is refused.
    public static let fields: Set<String> = ["key", "outcome", "seq", "version", "conflict", "reason"]

    public init(key: String, outcome: Outcome, seq: Int? = nil, version: Int? = nil, conflict: Bool? = nil,
                reason: String? = nil) {
        self.key = key
        self.outcome = outcome
        self.seq = seq
        self.version = version
        self.conflict = conflict
        self.reason = reason
    }
}

/// server → device: one result per op of a `push`, in order; with `page` when the push asked for one (its
/// `cursor` and `limit`) and the server could read it after the commit.
public struct PushResult: MessageBody {
    public var req: Int
    public var results: [OpResult]
    /// The page a pull from the push's cursor would get now, read after the push's commit (its `req` is the push's).
    public var page: Page?
    public static let fields: Set<String> = ["req", "results", "page"]

    public init(req: Int, results: [OpResult], page: Page? = nil) {
        self.req = req
        self.results = results
        self.page = page
    }

    public func validate() throws(ProtocolError) {
        guard let page else { return }
        guard page.req == req else {
            throw .invalidValue(type: "pushResult", field: "page.req", reason: "is \(page.req), not the push's \(req)")
        }
        try page.validate()
    }
}

/// device → server: the changes after `cursor`, at most `limit`. Answered with `page`.
public struct Pull: MessageBody {
    public var req: Int
    public var cursor: Int
    public var limit: Int
    /// Optional: the account the device believes it reads; the server refuses one that is not the device's own.
    public var account: String?
    public static let fields: Set<String> = ["req", "cursor", "limit", "account"]

    public init(req: Int, cursor: Int, limit: Int, account: String? = nil) {
        self.req = req
        self.cursor = cursor
        self.limit = limit
        self.account = account
    }

    public func validate() throws(ProtocolError) {
        guard cursor >= 0 else { throw .invalidValue(type: "pull", field: "cursor", reason: "is negative") }
        guard (1...Limits.maxPageLimit).contains(limit) else {
            let reason = "must be 1...\(Limits.maxPageLimit), got \(limit)"
            throw .invalidValue(type: "pull", field: "limit", reason: reason)
        }
    }
}

/// A change the server recorded when it applied an op.
public struct Change: Codable, Sendable, Equatable {
    public var seq: Int
    public var draft: String
    public var action: DraftAction
    public var version: Int
    public var title: String?
    public var body: String?
    public var origin: String
    public var key: String
    public var conflict: Bool

    public init(seq: Int, draft: String, action: DraftAction, version: Int, title: String?, body: String?,
                origin: String, key: String, conflict: Bool) {
        self.seq = seq
        self.draft = draft
        self.action = action
        self.version = version
        self.title = title
        self.body = body
        self.origin = origin
        self.key = key
        self.conflict = conflict
    }

    /// Every key a change may carry; any other is refused.
    public static let fields: Set<String> = [
        "seq", "draft", "action", "version", "title", "body", "origin", "key", "conflict",
    ]
}

/// server → device: changes after the cursor, in seq order; `next` is the cursor to pull from next.
public struct Page: MessageBody {
    public var req: Int
    public var changes: [Change]
    public var next: Int
    public var head: Int
    public static let fields: Set<String> = ["req", "changes", "next", "head"]

    public init(req: Int, changes: [Change], next: Int, head: Int) {
        self.req = req
        self.changes = changes
        self.next = next
        self.head = head
    }

    public func validate() throws(ProtocolError) {
        guard next >= 0 else { throw .invalidValue(type: "page", field: "next", reason: "is negative") }
        guard head >= 0 else { throw .invalidValue(type: "page", field: "head", reason: "is negative") }
    }
}

// MARK: - Server → broker

/// A reference to a change: never its title or body.
public struct ChangeRef: Codable, Sendable, Equatable {
    public var seq: Int
    public var draft: String
    public var version: Int

    /// Every key a reference may carry: a title or body here is refused, not ignored.
    public static let fields: Set<String> = ["seq", "draft", "version"]

    public init(seq: Int, draft: String, version: Int) {
        self.seq = seq
        self.draft = draft
        self.version = version
    }
}

/// server → broker: an account's head moved. References only.
public struct Notice: MessageBody {
    public var account: String
    public var head: Int
    public var origin: String
    public var changes: [ChangeRef]
    public static let fields: Set<String> = ["account", "head", "origin", "changes"]

    public init(account: String, head: Int, origin: String, changes: [ChangeRef]) {
        self.account = account
        self.head = head
        self.origin = origin
        self.changes = changes
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(account, "notice", "account")
        guard head >= 0 else { throw .invalidValue(type: "notice", field: "head", reason: "is negative") }
    }
}

// MARK: - Device ↔ broker

/// device → broker: register for hints. Answered with `registered` or `error`.
public struct Register: MessageBody {
    public var device: String
    public var account: String
    public var platform: Platform
    public var token: String
    public static let fields: Set<String> = ["device", "account", "platform", "token"]

    public init(device: String, account: String, platform: Platform, token: String) {
        self.device = device
        self.account = account
        self.platform = platform
        self.token = token
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(device, "register", "device")
        try Limits.checkID(account, "register", "account")
        try Limits.checkID(token, "register", "token")
    }
}

public struct Registered: MessageBody {
    public var device: String
    public static let fields: Set<String> = ["device"]

    public init(device: String) { self.device = device }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(device, "registered", "device")
    }
}

/// What the app is doing, as the OS sees it.
public enum AppState: String, Codable, Sendable {
    case foreground, background, forceQuit, closed
}

/// device → broker: the device's state as the OS would tell its push service.
public struct DeviceState: MessageBody {
    public var device: String
    public var online: Bool
    public var app: AppState
    /// Android doze or iOS low-power: background delivery waits for a maintenance window.
    public var doze: Bool
    /// The user switched background refresh off (iOS).
    public var refreshOff: Bool
    public static let fields: Set<String> = ["device", "online", "app", "doze", "refreshOff"]

    public init(device: String, online: Bool, app: AppState, doze: Bool = false, refreshOff: Bool = false) {
        self.device = device
        self.online = online
        self.app = app
        self.doze = doze
        self.refreshOff = refreshOff
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(device, "deviceState", "device")
    }
}

/// broker → device: the account's head moved. A reference and nothing more.
public struct Hint: MessageBody {
    public var hint: String
    public var account: String
    public var head: Int
    public static let fields: Set<String> = ["hint", "account", "head"]

    public init(hint: String, account: String, head: Int) {
        self.hint = hint
        self.account = account
        self.head = head
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(hint, "hint", "hint")
        try Limits.checkID(account, "hint", "account")
        guard head >= 0 else { throw .invalidValue(type: "hint", field: "head", reason: "is negative") }
    }
}

// MARK: - Launcher ↔ any process

/// launcher → process: do something (edit, open, set faults, report stats…). Answered with `controlAck`.
public struct Control: MessageBody {
    public var req: Int
    public var command: String
    public var args: [String: JSONValue]
    public static let fields: Set<String> = ["req", "command", "args"]

    public init(req: Int, command: String, args: [String: JSONValue] = [:]) {
        self.req = req
        self.command = command
        self.args = args
    }

    public func validate() throws(ProtocolError) {
        try Limits.checkID(command, "control", "command")
    }
}

public struct ControlAck: MessageBody {
    public var req: Int
    public var ok: Bool
    public var detail: String
    public var data: JSONValue?
    public static let fields: Set<String> = ["req", "ok", "detail", "data"]

    public init(req: Int, ok: Bool, detail: String = "", data: JSONValue? = nil) {
        self.req = req
        self.ok = ok
        self.detail = detail
        self.data = data
    }
}

// MARK: - Errors

/// Machine-readable error codes; `message` says the rest in words.
public enum ErrorCode: String, Codable, Sendable {
    case badFrame, unsupportedVersion, unknownType, tooLarge, malformed, invalid, unexpected
    case unknownDevice, badToken, notAuthenticated, wrongAccount, cursorAhead, unknownCommand, busy, `internal`
}

/// Any process → peer: your message was refused. Nothing was changed.
public struct ErrorReply: MessageBody {
    public var req: Int?
    public var code: ErrorCode
    public var message: String
    public static let fields: Set<String> = ["req", "code", "message"]

    public init(req: Int? = nil, code: ErrorCode, message: String) {
        self.req = req
        self.code = code
        self.message = message
    }
}
