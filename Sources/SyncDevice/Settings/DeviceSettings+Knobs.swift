import Foundation
import LabKit
import SQLite
import SyncProtocol

/// One device setting as every boundary sees it: its topology key, its command-line flag, the values it takes and
/// one line of help. Its default is the value in `DeviceSettings()`, written once, in DeviceSettings.swift.
///
/// `synclab-device --help`, the device's flag parsing, the launcher's topology reading (`device: {…}` at the top,
/// per account and per device) and the argv the launcher builds are all made from `DeviceSettings.knobs`.
/// To add a device setting: a field with its default in DeviceSettings.swift, one entry in `knobs` below, the code
/// that uses it, and its line in docs/TOPOLOGY.md (a test checks that the doc names every key with its default).
public struct DeviceKnob: Sendable {
    /// What a knob accepts. Every value crosses the process boundary as the text of its flag.
    public enum Values: Sendable {
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        /// Simulated seconds; a topology may write "30s", "5m", "2h".
        case duration(ClosedRange<Double>)
        case bool
        case choice([String])
    }

    /// The key in a topology's `device: {…}` block.
    public let key: String
    /// The flag of `synclab-device` (without `--`).
    public let flag: String
    public let values: Values
    public let help: String
    /// The setting's value, as flag text.
    let read: @Sendable (DeviceSettings) -> String
    /// Stores an already-checked value.
    let write: @Sendable (inout DeviceSettings, String) -> Void

    /// The default, as flag text.
    public var defaultText: String { read(DeviceSettings()) }

    /// The value in `settings`, as flag text.
    public func text(in settings: DeviceSettings) -> String { read(settings) }

    /// Sets the knob from flag text; the error says what the knob accepts (the caller adds where it came from).
    public func apply(_ text: String, to settings: inout DeviceSettings) throws(KnobError) {
        switch values {
        case .integer(let range):
            guard let value = Int(text), range.contains(value) else {
                throw KnobError(problem: "must be an integer from \(range.lowerBound) to \(range.upperBound), got \(text)")
            }
        case .number(let range), .duration(let range):
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw KnobError(problem: "must be a number from \(Self.format(range.lowerBound)) to "
                    + "\(Self.format(range.upperBound)), got \(text)")
            }
        case .bool:
            guard text == "true" || text == "false" else { throw KnobError(problem: "must be true or false, got \(text)") }
        case .choice(let allowed):
            guard allowed.contains(text) else {
                throw KnobError(problem: "must be one of \(allowed.joined(separator: ", ")), got \"\(text)\"")
            }
        }
        write(&settings, text)
    }

    /// The placeholder `--help` shows for the value.
    var placeholder: String {
        switch values {
        case .integer: return "N"
        case .number: return "X"
        case .duration: return "S"
        case .bool: return "BOOL"
        case .choice(let allowed): return allowed.joined(separator: "|")
        }
    }

    /// The flag as `--help` lists it.
    public var commandFlag: Flag { Flag(flag, value: placeholder, default: defaultText, help: help) }

    /// A number as flag text: integers without a fraction.
    public static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A value a knob does not accept.
public struct KnobError: Error, Sendable, CustomStringConvertible {
    public let problem: String
    public var description: String { problem }
}

extension DeviceKnob {
    static func integer(_ key: String, _ flag: String, _ range: ClosedRange<Int>, _ path: WritableKeyPath<DeviceSettings, Int> & Sendable,
                        _ help: String) -> DeviceKnob {
        DeviceKnob(key: key, flag: flag, values: .integer(range), help: help,
                   read: { String($0[keyPath: path]) }, write: { $0[keyPath: path] = Int($1)! })
    }

    /// A number stored as `scale` × the value given (minutes given, seconds stored).
    static func number(_ key: String, _ flag: String, _ range: ClosedRange<Double>, scale: Double = 1,
                       _ path: WritableKeyPath<DeviceSettings, Double> & Sendable, _ help: String) -> DeviceKnob {
        DeviceKnob(key: key, flag: flag, values: .number(range), help: help,
                   read: { format($0[keyPath: path] / scale) }, write: { $0[keyPath: path] = Double($1)! * scale })
    }

    static func duration(_ key: String, _ flag: String, _ range: ClosedRange<Double>,
                         _ path: WritableKeyPath<DeviceSettings, Double> & Sendable, _ help: String) -> DeviceKnob {
        DeviceKnob(key: key, flag: flag, values: .duration(range), help: help,
                   read: { format($0[keyPath: path]) }, write: { $0[keyPath: path] = Double($1)! })
    }

    static func bool(_ key: String, _ flag: String, _ path: WritableKeyPath<DeviceSettings, Bool> & Sendable, _ help: String)
        -> DeviceKnob
    {
        DeviceKnob(key: key, flag: flag, values: .bool, help: help,
                   read: { $0[keyPath: path] ? "true" : "false" }, write: { $0[keyPath: path] = $1 == "true" })
    }

    /// A choice among the cases of a string enum, written as their raw values (lower-cased for the flag).
    static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ key: String, _ flag: String, _ path: WritableKeyPath<DeviceSettings, E> & Sendable, _ help: String
    ) -> DeviceKnob where E.RawValue == String {
        DeviceKnob(key: key, flag: flag, values: .choice(E.allCases.map { $0.rawValue.lowercased() }), help: help,
                   read: { $0[keyPath: path].rawValue.lowercased() },
                   write: { settings, text in
                       settings[keyPath: path] = E.allCases.first { $0.rawValue.lowercased() == text }!
                   })
    }
}

extension Synchronous: CaseIterable {
    public static let allCases: [Synchronous] = [.off, .normal, .full]
}

extension DeviceSettings {
    /// Every device setting a topology or a command line can give. Keep `key` and `flag` stable: topologies and
    /// scripts name them.
    public static let knobs: [DeviceKnob] = [
        .integer("batch", "batch", 1...Limits.maxOpsPerPush, \.batch, "ops per push (one push per pass)"),
        .integer("pageLimit", "page-limit", 1...Limits.maxPageLimit, \.pageLimit, "changes per pulled page"),
        .integer("maxPages", "max-pages", 1...10_000, \.maxPages, "pages pulled per pass"),
        .duration("leaseSec", "lease-sec", 0.001...1e9, \.leaseSec, "simulated seconds a claim holds an op"),
        .integer("replyTimeoutMs", "reply-timeout-ms", 1...3_600_000, \.replyTimeoutMs,
                 "real ms before a request without reply is an unknown outcome"),
        .integer("maxAttempts", "max-attempts", 1...1_000_000, \.maxAttempts, "transient failures before needsAttention"),
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
        .choice("executionClock", "execution-clock", \.executionClock,
                "the clock pass execution (the iOS 30 s window, Android's limits) is measured on"),
        .choice("synchronous", "synchronous", \.synchronous,
                "SQLite synchronous of the device's file: normal (survives kill -9), full (fsync per commit) or off"),
    ] + switchKnobs

    /// The knob a topology key names.
    public static func knob(key: String) -> DeviceKnob? { knobs.first { $0.key == key } }

    /// The flags (`--flag value`) that turn a device started with `base` into one with these settings: only the
    /// knobs whose values differ, in table order.
    public func flags(over base: DeviceSettings = DeviceSettings()) -> [String] {
        Self.knobs.flatMap { knob -> [String] in
            let mine = knob.text(in: self)
            return mine == knob.text(in: base) ? [] : ["--\(knob.flag)", mine]
        }
    }

    /// The knobs whose values differ from `base`, as topology key → flag text (for reports).
    public func differences(from base: DeviceSettings) -> [(key: String, value: String)] {
        Self.knobs.compactMap { knob in
            let mine = knob.text(in: self)
            return mine == knob.text(in: base) ? nil : (knob.key, mine)
        }
    }

    /// Reads every knob from parsed flags (a missing flag keeps the value in `self`).
    mutating func apply(_ options: ParsedOptions) throws {
        for knob in Self.knobs {
            guard let text = options.values[knob.flag] else { continue }
            do {
                try knob.apply(text, to: &self)
            } catch {
                throw LabError.usage("--\(knob.flag) \(error.problem)")
            }
        }
    }
}
