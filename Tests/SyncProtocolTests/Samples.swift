import SyncProtocol

/// Realistic messages of every type: each with its optional fields set, and again with them absent.
enum Samples {
    static let opCreate = Op(key: "pixel-000017", draft: "draft-7f3a", action: .create, base: 0,
                             title: "Groceries", body: "milk, eggs, 🍞 \"sourdough\"\nand coffee")
    static let opUpdate = Op(key: "pixel-000018", draft: "draft-7f3a", action: .update, base: 1, title: "Groceries!")
    static let opDelete = Op(key: "pixel-000019", draft: "draft-0001", action: .delete, base: 4)

    static let change = Change(seq: 42, draft: "draft-7f3a", action: .update, version: 2, title: "Groceries!",
                               body: "milk, eggs", origin: "pixel", key: "pixel-000018", conflict: false)
    static let deletion = Change(seq: 43, draft: "draft-0001", action: .delete, version: 5, title: nil, body: nil,
                                 origin: "iphone", key: "iphone-000003", conflict: true)

    static let withOptionals: [Message] = [
        .hello(Hello(device: "pixel", account: "acme", token: "t-3f9c2a", platform: .android)),
        .welcome(Welcome(device: "pixel", account: "acme", head: 41)),
        .push(Push(req: 7, ops: [opCreate, opUpdate, opDelete], cursor: 40, limit: 200)),
        .pushResult(PushResult(req: 7, results: [
            OpResult(key: "pixel-000017", outcome: .applied, seq: 41, version: 1, conflict: false),
            OpResult(key: "pixel-000018", outcome: .duplicate, seq: 42, version: 2, conflict: true),
            OpResult(key: "pixel-000019", outcome: .rejected, reason: "unknown draft"),
            OpResult(key: "pixel-000020", outcome: .retryLater, reason: "injected transient failure"),
        ], page: Page(req: 7, changes: [change, deletion], next: 43, head: 43))),
        .pull(Pull(req: 8, cursor: 40, limit: 200, account: "acme")),
        .page(Page(req: 8, changes: [change, deletion], next: 43, head: 43)),
        .notice(Notice(account: "acme", head: 43, origin: "pixel", changes: [
            ChangeRef(seq: 42, draft: "draft-7f3a", version: 2), ChangeRef(seq: 43, draft: "draft-0001", version: 5),
        ])),
        .register(Register(device: "iphone", account: "acme", platform: .ios, token: "t-77aa01")),
        .registered(Registered(device: "iphone")),
        .deviceState(DeviceState(device: "iphone", online: false, app: .background, doze: true, refreshOff: true)),
        .hint(Hint(hint: "h-000123", account: "acme", head: 43)),
        .control(Control(req: 3, command: "faults", args: [
            "dropReply": 0.25, "replyDelayMs": 150, "off": false, "note": "quiet hours",
            "targets": .array(["pixel", "iphone"]), "window": .object([("from", 10), ("to", 20)]), "none": .null,
        ])),
        .controlAck(ControlAck(req: 3, ok: true, detail: "faults set", data: .object([
            ("applied", 120), ("heads", .object([("acme", 43)])), ("ratio", 0.5), ("names", .array(["a", "b"])),
        ]))),
        .error(ErrorReply(req: 9, code: .badToken, message: "hello: token does not match device \"pixel\"")),
    ]

    static let withoutOptionals: [Message] = [
        .push(Push(req: 0, ops: [opDelete])),
        .pushResult(PushResult(req: 0, results: [])),
        .pull(Pull(req: 0, cursor: 0, limit: 1)),
        .page(Page(req: 1, changes: [], next: 0, head: 0)),
        .notice(Notice(account: "acme", head: 0, origin: "web", changes: [])),
        .deviceState(DeviceState(device: "browser", online: true, app: .foreground)),
        .control(Control(req: 1, command: "ping")),
        .controlAck(ControlAck(req: 1, ok: false)),
        .error(ErrorReply(code: .badFrame, message: "2 frames expected")),
    ]

    static let all = withOptionals + withoutOptionals
}

extension Message {
    /// The message's frames with the body replaced by `json`.
    static func frames(_ type: String, _ json: String) -> [[UInt8]] {
        [Array("SL1 \(type)".utf8), Array(json.utf8)]
    }
}
