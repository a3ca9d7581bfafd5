import Foundation
import LabKit
import SQLite
import SyncProtocol

/// One device setting as every boundary sees it (`Knob`, LabKit/Knob.swift): its topology key, its command-line
/// flag, the values it takes and one line of help. Its default is the value in `DeviceSettings()`, written once, in
/// DeviceSettings.swift.
///
/// `synclab-device --help`, the device's flag parsing, the launcher's topology reading (`device: {…}` at the top,
/// per account and per device) and the argv the launcher builds are all made from `DeviceSettings.knobs`.
/// To add a device setting: a field with its default in DeviceSettings.swift, one entry in `knobs` below, the code
/// that uses it, and its line in docs/TOPOLOGY.md (a test checks that the doc names every key with its default).
public typealias DeviceKnob = Knob<DeviceSettings>

extension DeviceSettings: KnobSettings {
    /// Every device setting a topology or a command line can give. Keep `key` and `flag` stable: topologies and
    /// scripts name them.
    public static let knobs: [DeviceKnob] = [
        .integer("batch", "batch", 1...Limits.maxOpsPerPush, \.batch, "ops per push (one push per pass)"),
        .integer("pageLimit", "page-limit", 1...Limits.maxPageLimit, \.pageLimit, "changes per pulled page"),
        .integer("maxPages", "max-pages", 1...10_000, \.maxPages, "pages pulled per pass"),
        .duration("leaseSec", "lease-sec", 0.001...1e9, \.leaseSec, "simulated seconds a claim holds an op"),
        .integer("replyTimeoutMs", "reply-timeout-ms", 1...3_600_000, \.replyTimeoutMs,
                 "real ms before a request without reply is an unknown outcome"),
        .integer("maxAttempts", "max-attempts", 1...1_000_000, \.maxAttempts,
            "transient failures before needsAttention"),
        .duration("backoffBaseSec", "backoff-base-sec", 0.001...1e9, \.backoffBaseSec,
                  "first retry delay (simulated seconds), doubling each attempt"),
        .duration("backoffCapSec", "backoff-cap-sec", 0.001...1e9, \.backoffCapSec,
                  "longest retry delay (simulated seconds)"),
        .number("desiredIntervalMin", "desired-interval-min", 0.001...1e7, scale: 60, \.desiredIntervalSec,
                "interval the app asks its platform for (simulated minutes; seed 000's schedule(15.minutes))"),
        .number("freshnessBudgetMin", "freshness-budget-min", 0.001...1e7, scale: 60, \.freshnessBudgetSec,
                "data older than this (simulated minutes) is shown stale"),
        .bool("beacon", "beacon", \.beaconOnClose,
              "web: flush pending ops with a fire-and-forget push when the tab closes (navigator.sendBeacon)"),
        .bool("backgroundAppRefresh", "background-app-refresh", \.backgroundAppRefresh,
              "iOS: the user's Background App Refresh switch at start (off: no windows, no background pushes)"),
        .bool("screenOn", "screen-on", \.screenOn,
              "Android: the screen stays on while the app is in the background (other apps in use): no doze"),
        .named("executionClock", "execution-clock", \.executionClock,
               "the clock pass execution (the iOS 30 s window, Android's limits) is measured on"),
        .number("expireGraceSec", "expire-grace-sec", 0...3_600, \.expireGraceSec,
                "outside device: execution seconds between expire and the kill of a program whose pass ran over"),
        .named("synchronous", "synchronous", \.synchronous, lowercased: true,
               "SQLite synchronous of the device's file: normal (survives kill -9), full (fsync per commit) or off"),
    ] + switchKnobs
}
