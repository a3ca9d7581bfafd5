/// One flag a command accepts.
public struct Flag: Sendable {
    public let name: String
    public let value: String?  // placeholder shown in help (e.g. "PATH"); nil for a switch
    public let defaultValue: String?
    public let help: String

    public init(_ name: String, value: String? = nil, default defaultValue: String? = nil, help: String) {
        self.name = name
        self.value = value
        self.defaultValue = defaultValue
        self.help = help
    }
}

/// Parsed command-line options: `--name value`, `--name=value`, switches, positional arguments.
public struct ParsedOptions: Sendable {
    public var values: [String: String] = [:]
    /// Every value given for each flag, in order (`values` keeps the last): for repeatable flags like `--crash-at`.
    public var repeated: [String: [String]] = [:]
    public var switches: Set<String> = []
    public var positional: [String] = []
    public var helpRequested = false
    private let flags: [Flag]

    init(flags: [Flag]) { self.flags = flags }

    /// The value given, else the flag's default.
    public func string(_ name: String) -> String? {
        values[name] ?? flags.first(where: { $0.name == name })?.defaultValue
    }

    /// Every value given for a repeatable flag, in order; empty when it was not given.
    public func all(_ name: String) -> [String] { repeated[name] ?? [] }

    public func has(_ name: String) -> Bool { switches.contains(name) || values[name] != nil }

    public func require(_ name: String) throws -> String {
        guard let value = string(name), !value.isEmpty else { throw LabError.usage("missing --\(name)") }
        return value
    }

    public func int(_ name: String) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw LabError.usage("--\(name) must be an integer, got \"\(text)\"") }
        return value
    }

    public func double(_ name: String) throws -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text) else { throw LabError.usage("--\(name) must be a number, got \"\(text)\"") }
        return value
    }

    /// A probability in [0, 1].
    public func probability(_ name: String) throws -> Double {
        let value = try double(name) ?? 0
        guard (0...1).contains(value) else { throw LabError.usage("--\(name) must be between 0 and 1, got \(value)") }
        return value
    }
}

/// A command's flags, its parser and its help text.
public struct CommandSpec: Sendable {
    public let name: String
    public let summary: String
    public let usage: String
    public let flags: [Flag]
    public let footer: String

    public init(name: String, summary: String, usage: String, flags: [Flag], footer: String = "") {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.flags = flags
        self.footer = footer
    }

    /// Parses `arguments` (without the program name). Throws `LabError.usage` naming an unknown flag or a flag
    /// missing its value.
    public func parse(_ arguments: [String]) throws -> ParsedOptions {
        var options = ParsedOptions(flags: flags)
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" || Double(argument) != nil {
                options.positional.append(argument)
                continue
            }
            if argument == "-h" { options.helpRequested = true; continue }
            if argument == "--" { onlyPositional = true; continue }
            // A single-dash word (`-help`, `-v`) is a mistyped flag, not an argument to pass on silently.
            guard argument.hasPrefix("--") else {
                throw LabError.usage("unknown flag \(argument): flags start with -- (see \(self.name) --help)")
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if name == "help" { options.helpRequested = true; continue }
            guard let flag = flags.first(where: { $0.name == name }) else {
                throw LabError.usage("unknown flag --\(name) (see \(self.name) --help)")
            }
            if flag.value == nil {
                if let inline {
                    guard let on = ["true": true, "1": true, "false": false, "0": false][inline] else {
                        throw LabError.usage("--\(name) is a switch; got \"\(inline)\"")
                    }
                    if on { options.switches.insert(name) } else { options.switches.remove(name) }
                } else {
                    options.switches.insert(name)
                }
                continue
            }
            if let inline {
                options.values[name] = inline
            } else {
                guard index < arguments.count else { throw LabError.usage("--\(name) needs a value (\(flag.value!))") }
                options.values[name] = arguments[index]
                index += 1
            }
            options.repeated[name, default: []].append(options.values[name]!)
        }
        return options
    }

    /// The `--help` text.
    public var help: String {
        var out = "\(name) — \(summary)\n\nUsage: \(usage)\n\nOptions:\n"
        let left = flags.map { flag in "  --\(flag.name)" + (flag.value.map { " \($0)" } ?? "") }
        let width = min(max(left.map(\.count).max() ?? 0, 10) + 2, 34)
        for (flag, text) in zip(flags, left) {
            var line = text.count >= width ? text + "\n" + String(repeating: " ", count: width) : text.padding(width)
            line += flag.help
            if let defaultValue = flag.defaultValue { line += " (default: \(defaultValue))" }
            out += line + "\n"
        }
        out += "  --help".padding(width) + "show this help\n"
        if !footer.isEmpty { out += "\n" + footer + "\n" }
        return out
    }

    /// Parses, printing help and exiting 0 on `--help`, printing the error and exiting 2 on a usage error.
    public func parseOrExit(_ arguments: [String]) -> ParsedOptions {
        do {
            let options = try parse(arguments)
            if options.helpRequested {
                Output.stdout(help)
                exitProcess(0)
            }
            return options
        } catch {
            Output.stderr("\(name): \(error)\n")
            exitProcess(2)
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

#if canImport(Glibc)
import Glibc
public func exitProcess(_ code: Int32) -> Never { Glibc.exit(code) }
#else
import Foundation
public func exitProcess(_ code: Int32) -> Never { Foundation.exit(code) }
#endif
