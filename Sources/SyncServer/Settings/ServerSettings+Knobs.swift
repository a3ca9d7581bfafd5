import LabKit

/// The server's settings as knobs (LabKit/Knob.swift): `synclab-server --help`, its flag parsing, the launcher's
/// reading of a topology's `server: {…}` and the argv it builds are all made from this table. To add a server
/// setting: a field with its default (ServerSettings, ServerFaults or ServerSwitches), one entry below, the code that
/// uses it, and its line in docs/TOPOLOGY.md (a test checks that the doc names every key with its default).
///
/// The entries marked `.atRuntime` (fields of `ServerFaults`) are the faults the control command `faults`, a
/// scenario's `faults` step and a nemesis `faults` window change while the server runs, and the timeline draws
/// (Knob+Runtime.swift); they come first, in the order the `fault.set` event has always listed them.
extension ServerSettings: KnobSettings {
    public static let knobs: [Knob<ServerSettings>] = [
        .number("dropReply", "drop-reply", 0...1, \.faults.dropReply,
                "probability a push's reply is dropped after commit").atRuntime,
        .number("transient", "transient", 0...1, \.faults.transient,
                "probability a push is answered retryLater, unapplied").atRuntime,
        .number("reject", "reject", 0...1, \.faults.reject,
                "probability each new op is rejected(\"injected\")").atRuntime,
        .integer("replyDelayMs", "reply-delay-ms", 0...600_000, \.faults.replyDelayMs,
                 "delay every reply to a device by N real ms").atRuntime,
        .number("dropRequest", "drop-request", 0...1, \.faults.dropRequest,
                "probability a push is dropped before its commit: nothing applied, no reply").atRuntime,
        .number("failCommit", "fail-commit", 0...1, \.faults.failCommit,
                "probability a push's commit fails after its ops were decided (nothing applied)").atRuntime,
        .integer("slowPullMs", "slow-pull-ms", 0...600_000, \.faults.slowPullMs,
                 "delay serving every pull by N real ms (a slow read)").atRuntime,
        .named("notifyMode", "notify-mode", \.notifyMode,
               "push: a notice that would block is dropped; pub: lost silently if slow"),
        .integer("notifyHwm", "notify-hwm", 1...1_000_000, \.notifyHighWaterMark,
                 "notices queued for the broker before loss"),
        .named("synchronous", "synchronous", \.synchronous, among: [.normal, .full], lowercased: true,
               "SQLite synchronous: normal (survives kill -9) or full (fsync per commit)"),
        .bool("idempotency", "idempotency", spelled: .onOff, \.switches.idempotency,
              "design switch: off applies a resend with a known key again (docs/TOPOLOGY.md)"),
        .bool("noticeBeforeCommit", "notice-before-commit", spelled: .presence, \.switches.noticeBeforeCommit,
              "design switch: send the head-moved notice before the commit"),
        .bool("replyBeforeCommit", "reply-before-commit", spelled: .presence, \.switches.replyBeforeCommit,
              "design switch: send a push's reply before its commit"),
        .accounts("switchAccounts", "switch-accounts", \.switches.accounts,
                  "the design switches apply to these accounts only"),
    ]
}
