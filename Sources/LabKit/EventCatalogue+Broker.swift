extension EventType {
    /// The events only the broker writes.
    static let brokerEvents: [EventType] = [
        deviceRegistered,
        deviceState,
        hintAccepted,
        hintCoalesced,
        hintDataAttached,
        hintDelivered,
        hintDiscarded,
        hintDropped,
        hintDuplicateFailed,
        hintDuplicated,
        hintExpired,
        hintHeld,
        hintThrottled,
        noticeReceived,
        sendFailed,
    ]

    public static let deviceRegistered = EventType(
        "device.registered", [.broker], "device account platform profile replaced:b peer",
        "a device registered with the broker for hints")
    public static let deviceState = EventType(
        "device.state", [.broker], "device online:b app doze:b refreshOff:b",
        "a device told the broker its online, app and doze state")
    public static let hintAccepted = EventType(
        "hint.accepted", [.broker], "hint device account head:i origin seqs:* reason?",
        "the broker accepted a hint for a device from a notice")
    public static let hintCoalesced = EventType(
        "hint.coalesced", [.broker], "hint device by",
        "a held hint was replaced by a newer one")
    public static let hintDataAttached = EventType(
        "hint.dataAttached", [.broker], "hint changes:i reason",
        "design switch: a hint carried the notice's changes")
    public static let hintDelivered = EventType(
        "hint.delivered", [.broker], "hint device head:i waitedSec:n",
        "the broker sent a hint to the device")
    public static let hintDiscarded = EventType(
        "hint.discarded", [.broker], "hint device reason",
        "the push service discarded a hint")
    public static let hintDropped = EventType(
        "hint.dropped", [.broker], "hint device reason",
        "a hint was lost (chaos, HWM, unreachable device, …)")
    public static let hintDuplicateFailed = EventType(
        "hint.duplicateFailed", [.broker], "hint device reason",
        "a duplicate copy of a hint could not be sent (not counted)")
    public static let hintDuplicated = EventType(
        "hint.duplicated", [.broker], "hint device head:i",
        "a hint was delivered a second time")
    public static let hintExpired = EventType(
        "hint.expired", [.broker], "hint device reason waitedSec:n",
        "a held hint outlived its time to live")
    public static let hintHeld = EventType(
        "hint.held", [.broker], "hint device reason untilSec:n?",
        "the broker holds a hint (offline device, doze, chaos delay)")
    public static let hintThrottled = EventType(
        "hint.throttled", [.broker], "hint device reason",
        "the push service throttled a hint")
    public static let noticeReceived = EventType(
        "notice.received", [.broker], "account head:i origin seqs:* hints:i",
        "the broker received a head-moved notice")
    public static let sendFailed = EventType(
        "send.failed", [.broker], "error",
        "libzmq refused a send for a reason other than HWM or unknown peer")
}
