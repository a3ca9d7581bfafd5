import SyncProtocol

/// A scripted peer that answers the device's requests the way the protocol says a server does (idempotent apply by
/// key, pages from a cursor). It exists only to drive the pure `DeviceInstance` in unit tests; the end-to-end tests
/// use the real `synclab-server`.
struct ScriptedServer {
    var account = "acme"
    var changes: [Change] = []
    var results: [String: OpResult] = [:]
    var versions: [String: Int] = [:]
    /// Ops whose body is longer than this are rejected for good.
    var rejectBodiesOver = Int.max
    /// Keys answered `retryLater`, every time.
    var retryLaterKeys: Set<String> = []
    /// Answer a push with `notAuthenticated` once (a restarted server that forgot the session).
    var forgetSessionOnce = false
    var hellos = 0
    /// A push that asks for a page (`Push.cursor`) gets it with its results, as the real server does; false: an
    /// older server that ignores the ask (the device then pulls).
    var answersPushPages = true

    var head: Int { changes.count }

    /// A change made by another device, straight into the server's log.
    mutating func remoteEdit(draft: String, title: String, origin: String = "a") -> Change {
        let version = (versions[draft] ?? 0) + 1
        versions[draft] = version
        let change = Change(seq: head + 1, draft: draft, action: version == 1 ? .create : .update, version: version,
                            title: title, body: "body of \(title)", origin: origin, key: "\(origin)-\(head + 1)",
                            conflict: false)
        changes.append(change)
        return change
    }

    mutating func apply(_ op: Op, origin: String) -> OpResult {
        if let earlier = results[op.key] {
            return OpResult(key: op.key, outcome: .duplicate, seq: earlier.seq, version: earlier.version)
        }
        if retryLaterKeys.contains(op.key) {
            return OpResult(key: op.key, outcome: .retryLater, reason: "busy")
        }
        if (op.body?.utf8.count ?? 0) > rejectBodiesOver {
            return OpResult(key: op.key, outcome: .rejected, reason: "body too large")
        }
        let version = (versions[op.draft] ?? 0) + 1
        versions[op.draft] = version
        let change = Change(seq: head + 1, draft: op.draft, action: op.action, version: version, title: op.title,
                            body: op.body, origin: origin, key: op.key, conflict: false)
        changes.append(change)
        let result = OpResult(key: op.key, outcome: .applied, seq: change.seq, version: version)
        results[op.key] = result
        return result
    }

    /// The reply to one request, nil for messages a server does not answer.
    mutating func answer(_ message: Message, from device: String) -> Message? {
        switch message {
        case .hello(let hello):
            hellos += 1
            return .welcome(Welcome(device: hello.device, account: hello.account, head: head))
        case .push(let push):
            if forgetSessionOnce {
                forgetSessionOnce = false
                return .error(ErrorReply(req: push.req, code: .notAuthenticated, message: "say hello first"))
            }
            let results = push.ops.map { apply($0, origin: device) }
            guard answersPushPages, let cursor = push.cursor, let limit = push.limit else {
                return .pushResult(PushResult(req: push.req, results: results))
            }
            return .pushResult(PushResult(req: push.req, results: results, page: page(push.req, cursor, limit)))
        case .pull(let pull):
            return .page(page(pull.req, pull.cursor, pull.limit))
        default:
            return nil
        }
    }

    /// The changes after `cursor`, at most `limit`, answering request `req`.
    func page(_ req: Int, _ cursor: Int, _ limit: Int) -> Page {
        let slice = Array(changes.filter { $0.seq > cursor }.prefix(limit))
        return Page(req: req, changes: slice, next: slice.last?.seq ?? cursor, head: head)
    }

    /// How many changes carry `key`: exactly-once means 1.
    func applications(of key: String) -> Int { changes.filter { $0.key == key }.count }
}
