extension EventType {
    /// The events only the server writes.
    static let serverEvents: [EventType] = [
        ackLost,
        faultInjected,
        helloAccepted,
        noticeBeforeCommit,
        noticeDropped,
        noticePhantom,
        noticeSent,
        opApplied,
        opDuplicate,
        opReapplied,
        opRejected,
        opRetryLater,
        pullServed,
        replyBeforeCommit,
        replyLost,
    ]

    public static let ackLost = EventType(
        "ack.lost", [.server], "device req:i keys:a error reason",
        "an op the device was told was applied is gone: its commit failed after the reply left (replyBeforeCommit)")
    public static let faultInjected = EventType(
        "fault.injected", [.server], "kind? device? key? delayMs:i?",
        "a fault of the fault plan happened (one per op or per reply)")
    public static let helloAccepted = EventType(
        "hello.accepted", [.server], "device account peer",
        "the server opened a session for a device (peer: its connection, or a pool's and the device: PROTOCOL §14)")
    public static let noticeBeforeCommit = EventType(
        "notice.beforeCommit", [.server], "account head:i device reason",
        "design switch: the head-moved notice left before the commit")
    public static let noticeDropped = EventType(
        "notice.dropped", [.server], "account head:i origin seqs:* reason",
        "the server dropped a head-moved notice (its socket would have blocked)")
    public static let noticePhantom = EventType(
        "notice.phantom", [.server], "account head:i seqs:a reason",
        "a notice sent before a commit that then failed: a head that never existed")
    public static let noticeSent = EventType(
        "notice.sent", [.server], "account head:i origin seqs:*",
        "the server told the broker an account's head moved")
    public static let opApplied = EventType(
        "op.applied", [.server], "device account key seq:i draft action version:i conflict:b",
        "the server applied an op: a change with the next seq")
    public static let opDuplicate = EventType(
        "op.duplicate", [.server], "device key seq:*",
        "the server saw a known key again and answered as before")
    public static let opReapplied = EventType(
        "op.reapplied", [.server], "device key seq:i reason",
        "design switch: the server applied a known key again")
    public static let opRejected = EventType(
        "op.rejected", [.server], "device key reason",
        "the server rejected an op for good")
    public static let opRetryLater = EventType(
        "op.retryLater", [.server], "device key reason",
        "the server asked for the op again later")
    public static let pullServed = EventType(
        "pull.served", [.server], "device cursor:i count:i next:i head:i via?",
        "the server served a page of changes from a cursor (via push: with a push's results, which asked for it)")
    public static let replyBeforeCommit = EventType(
        "reply.beforeCommit", [.server], "device req:i keys:a reason",
        "design switch: a push's reply left before its commit")
    public static let replyLost = EventType(
        "reply.lost", [.server], "peer header reason suppressed:i?",
        "a reply to a device could not be sent (it went away or stopped reading)")
}
