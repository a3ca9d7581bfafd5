import LabKit

/// The broker's settings as knobs (LabKit/Knob.swift): `synclab-broker --help`, its flag parsing, the launcher's
/// reading of a topology's `broker: {…}` and the argv it builds are all made from this table. To add a broker
/// setting: a field with its default (BrokerSettings, ProfileSettings or ChaosSettings), one entry below, the code
/// that uses it, and its line in docs/TOPOLOGY.md (a test checks that the doc names every key with its default).
///
/// The entries marked `.atRuntime` (fields of `ChaosSettings`) are what the control command `chaos`, a scenario's
/// `chaos` step and a nemesis `chaos` window change while the broker runs, and the timeline draws
/// (Knob+Runtime.swift).
extension BrokerSettings: KnobSettings {
    public static let knobs: [Knob<BrokerSettings>] = [
        // No topology key: the launcher sets these from the server's `notifyMode` and `notifyHwm`.
        .named(nil, "notices-mode", \.noticesMode,
               "PULL (lossless) or SUB (ZeroMQ drops past the HWM and before subscribing)"),
        .integer(nil, "notices-hwm", 0...Int(Int32.max), \.noticesHWM, "receive high-water mark of the notices socket"),
        .integer("hintHwm", "hint-hwm", 0...Int(Int32.max), \.hintHWM,
                 "send high-water mark per device; a hint past it is dropped (reason hwm); 0: no limit"),
        .named("profiles.android", "profile-android", \.profiles.android, "profile of android devices"),
        .named("profiles.ios", "profile-ios", \.profiles.ios, "profile of ios devices"),
        .named("profiles.web", "profile-web", \.profiles.web, "profile of web devices"),
        .integer("apnsThrottlePerHour", "apns-throttle-per-hour", 0...1_000_000, \.profiles.apnsThrottlePerHour,
                 "apns: background hints per device in any sliding simulated hour; 0: no throttle"),
        .integer("fcmMaxHeld", "fcm-max-held", 0...1_000_000, \.profiles.fcmMaxHeld,
                 "fcm: hints stored per offline device; one more deletes them all (resync on return)"),
        .named("fcmPriority", "fcm-priority", \.profiles.fcmPriority,
               "fcm: normal waits for the next doze maintenance window, high wakes the device; visible: high for a "
                + "new draft (shown as a notification), normal for the rest"),
        .accounts("fcmPriorityAccounts", "fcm-priority-accounts", \.profiles.fcmPriorityAccounts,
                  "--fcm-priority applies to these accounts only (the others' hints go out at high priority)"),
        .integer("fcmDemoteAfter", "fcm-demote-after", 0...1_000_000, \.profiles.fcmDemoteAfter,
                 "fcm: high-priority hints with no visible notification before later ones go as normal; 0: never"),
        .named("fcmCollapse", "fcm-collapse", \.profiles.fcmCollapse,
               "fcm: account = the account is the collapse key (one stored per key, at most 4 keys)"),
        .named("fcmDeletedMessages", "fcm-deleted-messages", \.profiles.fcmDeletedMessages,
               "design switch: the app's onDeletedMessages after an fcm overflow (handled: one resync hint; ignored: "
                + "none, hint.discarded reason deleted-messages-ignored)"),
        .accounts("fcmDeletedAccounts", "fcm-deleted-accounts", \.profiles.fcmDeletedAccounts,
                  "--fcm-deleted-messages applies to these accounts only (the others' apps handle it)"),
        .number("dozeWindowMin", "doze-window-min", 0.001...1e7, scale: 60, \.profiles.dozeWindowSec,
                "fcm: simulated minutes between doze maintenance windows"),
        .duration("webpushTtlSec", "webpush-ttl-sec", 0...1e9, \.profiles.webpushTTLSec,
                  "webpush: simulated seconds a hint is kept for an unreachable browser"),
        .number("loss", "loss", 0...1, \.chaos.loss,
                "chaos: probability a hint is lost (reason chaos-loss)").atRuntime,
        .number("duplicate", "duplicate", 0...1, \.chaos.duplicate,
                "chaos: probability a delivered hint is sent twice").atRuntime,
        .named("delayKind", "delay-kind", \.chaos.delayKind,
               "chaos: how the delay before the profile is drawn").atRuntime,
        .duration("delaySec", "delay-sec", 0...1e9, \.chaos.delaySec,
                  "chaos: the delay (constant), or its mean (uniform on [0, 2x), exponential), simulated seconds")
            .atRuntime,
        .number("reorder", "reorder", 0...1, \.chaos.reorder,
                "chaos: probability a hint waits until the device's next hint has overtaken it").atRuntime,
        .duration("reorderWindowSec", "reorder-window-sec", 0...1e9, \.reorderWindowSec,
                  "chaos: simulated seconds a reordered hint waits at most"),
        .bool("hintCarriesData", "hint-carries-data", spelled: .presence, \.hintCarriesData,
              "design switch: hints carry the notice's changes (data in the push), not only a reference"),
        .accounts("hintDataAccounts", "hint-data-accounts", \.hintDataAccounts,
                  "--hint-carries-data applies to these accounts only"),
    ]
}
