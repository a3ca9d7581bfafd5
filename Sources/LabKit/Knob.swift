/// One setting of a role as every boundary sees it: its topology key, its command-line flag, the values it takes and
/// one line of help. Its default is the value in `Settings()`, written once, in the settings type.
///
/// Each role has one table of them (`DeviceSettings.knobs`, `ServerSettings.knobs`, `BrokerSettings.knobs`): the
/// role's `--help`, its flag parsing, the launcher's topology reading and the argv the launcher builds are all made
/// from it, and a test checks docs/TOPOLOGY.md against it. A value crosses every boundary as its **text**: the
/// number, `true`/`false`, the choice's name, or a comma-separated list of accounts (`*`: all).
public struct Knob<Settings: Sendable>: Sendable {
    /// What a knob accepts.
    public enum Values: Sendable {
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        /// Simulated seconds; a topology may write "30s", "5m", "2h".
        case duration(ClosedRange<Double>)
        /// `true` or `false` in a topology; on the command line as `spelling` says.
        case bool(BoolSpelling)
        case choice([String])
        /// Account ids (a topology's list, the flag's `a,b`); the text `*` is every account.
        case accounts
    }

    /// How a boolean is written on the command line.
    public enum BoolSpelling: Sendable {
        /// `--flag true` / `--flag false`.
        case trueFalse
        /// `--flag on` / `--flag off`.
        case onOff
        /// A switch: `--flag` turns it on; it is off unless given (its default must be false).
        case presence
    }

    /// The key in the role's topology block (`device: {…}`, `server: {…}`, `broker: {…}`), dotted for a nested
    /// object (`profiles.ios`); nil for a flag the launcher sets itself from other settings.
    public let key: String?
    /// The flag (without `--`).
    public let flag: String
    public let values: Values
    public let help: String
    /// Also changed while the process runs, by its control command (the server's `faults`, the broker's `chaos`),
    /// a scenario step of that name and a nemesis window: marked in the table with `.atRuntime`
    /// (Knob+Runtime.swift).
    public internal(set) var runtime = false
    /// The setting's value, as text.
    let read: @Sendable (Settings) -> String
    /// Stores an already-checked value.
    let write: @Sendable (inout Settings, String) -> Void

    public init(key: String?, flag: String, values: Values, help: String,
                read: @escaping @Sendable (Settings) -> String,
                write: @escaping @Sendable (inout Settings, String) -> Void) {
        self.key = key
        self.flag = flag
        self.values = values
        self.help = help
        self.read = read
        self.write = write
    }

    /// The value in `settings`, as text.
    public func text(in settings: Settings) -> String { read(settings) }

    /// Sets the knob from its text; the error says what the knob accepts (the caller adds where it came from).
    public func apply(_ text: String, to settings: inout Settings) throws(KnobError) {
        switch values {
        case .integer(let range):
            guard let value = Int(text), range.contains(value) else {
                throw KnobError(problem: "must be an integer from \(range.lowerBound) to \(range.upperBound), got "
                    + "\(text)")
            }
        case .number(let range), .duration(let range):
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw KnobError(problem: "must be a number from \(range.lowerBound.flagText) to "
                    + "\(range.upperBound.flagText), got \(text)")
            }
        case .bool:
            guard text == "true"
                || text == "false" else { throw KnobError(problem: "must be true or false, got \(text)") }
        case .choice(let allowed):
            guard allowed.contains(text) else {
                throw KnobError(problem: "must be one of \(allowed.joined(separator: ", ")), got \"\(text)\"")
            }
        case .accounts:
            break
        }
        write(&settings, text)
    }

    /// The flags that set the knob to `text` (`--flag text`, `--flag on`, `--flag`).
    public func arguments(_ text: String) -> [String] {
        switch values {
        case .bool(.onOff): return ["--\(flag)", text == "true" ? "on" : "off"]
        case .bool(.presence): return [text == "true" ? "--\(flag)" : "--\(flag)=false"]
        default: return ["--\(flag)", text]
        }
    }

    /// The knob's text as parsed flags give it; nil when the flag was not given.
    public func given(in options: ParsedOptions) throws(KnobError) -> String? {
        switch values {
        case .bool(.presence):
            return options.switches.contains(flag) ? "true" : nil
        case .bool(.onOff):
            guard let text = options.values[flag] else { return nil }
            switch text {
            case "on": return "true"
            case "off": return "false"
            default: throw KnobError(problem: "must be on or off, got \"\(text)\"")
            }
        default:
            return options.values[flag]
        }
    }
}

extension Knob where Settings: KnobSettings {
    /// The default, as text.
    public var defaultText: String { read(Settings()) }

    /// The default as `--help` and docs/TOPOLOGY.md show it: `50`, `"normal"`, `false`, all accounts.
    public var documentedDefault: String {
        switch values {
        case .choice: return "`\"\(defaultText)\"`"
        case .accounts: return defaultText == "*" ? "all accounts" : "`\(defaultText)`"
        default: return "`\(defaultText)`"
        }
    }

    /// The flag as `--help` lists it, with its default.
    public var commandFlag: Flag {
        switch values {
        case .integer: return Flag(flag, value: "N", default: defaultText, help: help)
        case .number(let range):
            return Flag(flag, value: range == 0...1 ? "P" : "X", default: defaultText, help: help)
        case .duration: return Flag(flag, value: "S", default: defaultText, help: help)
        case .bool(.trueFalse): return Flag(flag, value: "BOOL", default: defaultText, help: help)
        case .bool(.onOff): return Flag(flag, value: "on|off", default: defaultText == "true" ? "on" : "off",
            help: help)
        // A switch's default is shown in its help, not as a value: a switch given a default would count as given.
        case .bool(.presence): return Flag(flag, help: help + " (default: off)")
        case .choice(let allowed): return Flag(flag, value: allowed.joined(separator: "|"), default: defaultText,
            help: help)
        case .accounts:
            return Flag(flag, value: "ID,ID", help: help + " (default: \(defaultText == "*" ? "all" : defaultText))")
        }
    }
}

/// A value a knob does not accept.
public struct KnobError: Error, Sendable, CustomStringConvertible {
    public let problem: String
    /// The argument or key it is about, when the caller did not already say (a control command's arguments).
    public let key: String?
    public init(problem: String, key: String? = nil) {
        self.problem = problem
        self.key = key
    }
    public var description: String { problem }
}

/// A role's settings: a value with every default, and the table of its knobs.
public protocol KnobSettings: Sendable {
    /// Every setting at its default.
    init()
    /// Every setting a topology or a command line can give. Keep `key` and `flag` stable: topologies and scripts
    /// name them.
    static var knobs: [Knob<Self>] { get }
}

extension KnobSettings {
    /// The knob a topology key names.
    public static func knob(key: String) -> Knob<Self>? { knobs.first { $0.key == key } }

    /// The flags `--help` lists for the table, in table order.
    public static var commandFlags: [Flag] { knobs.map(\.commandFlag) }

    /// The knobs whose values differ from `base`, with this value's text, in table order.
    public func changes(from base: Self) -> [(knob: Knob<Self>, text: String)] {
        Self.knobs.compactMap { knob in
            let mine = knob.text(in: self)
            return mine == knob.text(in: base) ? nil : (knob, mine)
        }
    }

    /// The flags that turn a process started with `base` into one with these settings: only the knobs whose values
    /// differ, in table order.
    public func flags(over base: Self = Self()) -> [String] {
        changes(from: base).flatMap { $0.knob.arguments($0.text) }
    }

    /// The knobs with a topology key whose values differ from `base`, as key → text (for reports).
    public func differences(from base: Self) -> [(key: String, value: String)] {
        changes(from: base).compactMap { change in change.knob.key.map { ($0, change.text) } }
    }

    /// Reads every knob from parsed flags (a missing flag keeps the value in `self`); the error names the flag.
    public mutating func apply(_ options: ParsedOptions) throws(LabError) {
        for knob in Self.knobs {
            do {
                guard let text = try knob.given(in: options) else { continue }
                try knob.apply(text, to: &self)
            } catch {
                throw LabError.usage("--\(knob.flag) \(error.problem)")
            }
        }
    }

    /// One line per topology key and the flag it sets, for a role's `--help` footer (`block`: `server`, …).
    public static func topologyHelp(block: String) -> String {
        var lines = ["In a topology (docs/TOPOLOGY.md), `\(block): {KEY: VALUE}` sets the flag of each key:"]
        var line = " "
        for knob in knobs {
            guard let key = knob.key else { continue }
            let item = " \(key) --\(knob.flag),"
            if line.count + item.count > 112 {
                lines.append(line)
                line = " "
            }
            line += item
        }
        lines.append(String(line.dropLast()))
        return lines.joined(separator: "\n")
    }
}

// MARK: - Making knobs

extension Knob {
    public static func integer<I: FixedWidthInteger & Sendable>(
        _ key: String?, _ flag: String, _ range: ClosedRange<Int>, _ path: WritableKeyPath<Settings, I> & Sendable,
        _ help: String
    ) -> Knob {
        Knob(key: key, flag: flag, values: .integer(range), help: help,
             read: { String($0[keyPath: path]) }, write: { $0[keyPath: path] = I(Int($1)!) })
    }

    /// A number stored as `scale` × the value given (minutes given, seconds stored).
    public static func number(_ key: String?, _ flag: String, _ range: ClosedRange<Double>, scale: Double = 1,
                              _ path: WritableKeyPath<Settings, Double> & Sendable, _ help: String) -> Knob {
        Knob(key: key, flag: flag, values: .number(range), help: help,
             read: { ($0[keyPath: path] / scale).flagText }, write: { $0[keyPath: path] = Double($1)! * scale })
    }

    public static func duration(_ key: String?, _ flag: String, _ range: ClosedRange<Double>,
                                _ path: WritableKeyPath<Settings, Double> & Sendable, _ help: String) -> Knob {
        Knob(key: key, flag: flag, values: .duration(range), help: help,
             read: { $0[keyPath: path].flagText }, write: { $0[keyPath: path] = Double($1)! })
    }

    public static func bool(_ key: String?, _ flag: String, spelled spelling: BoolSpelling = .trueFalse,
                            _ path: WritableKeyPath<Settings, Bool> & Sendable, _ help: String) -> Knob {
        Knob(key: key, flag: flag, values: .bool(spelling), help: help,
             read: { $0[keyPath: path] ? "true" : "false" }, write: { $0[keyPath: path] = $1 == "true" })
    }

    /// A choice among `cases` of a string enum (all of them unless named), written as their raw values
    /// (`lowercased`: as their raw values in lower case, for `Synchronous`'s `NORMAL`).
    public static func named<E: RawRepresentable & CaseIterable & Sendable>(
        _ key: String?, _ flag: String, _ path: WritableKeyPath<Settings, E> & Sendable, among cases: [E]? = nil,
        lowercased: Bool = false, _ help: String
    ) -> Knob where E.RawValue == String {
        let allowed = cases ?? Array(E.allCases)
        let spell: @Sendable (E) -> String = { lowercased ? $0.rawValue.lowercased() : $0.rawValue }
        return Knob(key: key, flag: flag, values: .choice(allowed.map(spell)), help: help,
                    read: { spell($0[keyPath: path]) },
                    write: { settings, text in settings[keyPath: path] = allowed.first { spell($0) == text }! })
    }

    /// Account ids; nil is every account (text `*`).
    public static func accounts(_ key: String?, _ flag: String,
                                _ path: WritableKeyPath<Settings, Set<String>?> & Sendable, _ help: String) -> Knob {
        Knob(key: key, flag: flag, values: .accounts, help: help,
             read: { $0[keyPath: path].map { $0.sorted().joined(separator: ",") } ?? "*" },
             write: { settings, text in
                 settings[keyPath: path] = text == "*" ? nil : Set(text.split(separator: ",").map(String.init))
             })
    }
}

extension Double {
    /// A number as flag text: integers without a fraction.
    public var flagText: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
