import LabKit
import Testing

@Suite("CommandSpec")
struct CommandSpecTests {
    static let spec = CommandSpec(
        name: "synclab-example",
        summary: "an example command",
        usage: "synclab-example [options] FILE…",
        flags: [
            Flag("db", value: "PATH", help: "the SQLite file"),
            Flag("listen", value: "ENDPOINT", default: "tcp://127.0.0.1:5555", help: "where devices connect"),
            Flag("seed", value: "N", default: "1", help: "seed of every random decision"),
            Flag("drop", value: "P", default: "0", help: "probability of dropping a reply"),
            Flag("a-very-long-flag-name-for-layout", value: "SOMETHING", help: "wraps onto its own line"),
            Flag("verbose", help: "echo events to stderr"),
        ],
        footer: "Start by hand: synclab-example --db /tmp/x.sqlite"
    )

    /// The usage message `parse` throws for `arguments`, or nil if it parsed.
    private func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try Self.spec.parse(arguments)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("--name value, --name=value, switches and positional arguments")
    func parsesEveryForm() throws {
        let options = try Self.spec.parse(["--db", "x.sqlite", "run", "--seed=7", "--verbose", "topology.json5"])
        #expect(options.string("db") == "x.sqlite")
        #expect(try options.int("seed") == 7)
        #expect(options.switches == ["verbose"])
        #expect(options.has("verbose"))
        #expect(options.positional == ["run", "topology.json5"])
        #expect(!options.helpRequested)
        // A value may itself start with a dash or hold an equals sign.
        let tricky = try Self.spec.parse(["--db", "-odd-name", "--listen=tcp://h:1?x=y", "--seed", "-3"])
        #expect(tricky.string("db") == "-odd-name")
        #expect(tricky.string("listen") == "tcp://h:1?x=y")
        #expect(try tricky.int("seed") == -3)
    }

    @Test("a flag not given reads as its default, and has() tells it was not given")
    func defaults() throws {
        let options = try Self.spec.parse([])
        #expect(options.string("listen") == "tcp://127.0.0.1:5555")
        #expect(!options.has("listen"))
        #expect(options.string("db") == nil)
        #expect(try options.int("seed") == 1)
        #expect(try options.probability("drop") == 0)
        #expect(throws: LabError.self) { try options.require("db") }
        #expect(try Self.spec.parse(["--db", "d"]).require("db") == "d")
    }

    @Test("a switch takes true/false/1/0 after an equals sign, nothing else")
    func switchValues() throws {
        #expect(try Self.spec.parse(["--verbose=true"]).has("verbose"))
        #expect(try !Self.spec.parse(["--verbose", "--verbose=0"]).has("verbose"))
        #expect(usageError(["--verbose=maybe"])?.contains("--verbose") == true)
    }

    @Test("an unknown flag is an error naming it")
    func unknownFlag() {
        #expect(usageError(["--colour", "red"]) == "unknown flag --colour (see synclab-example --help)")
        #expect(usageError(["--db", "x", "--dbb=y"])?.contains("--dbb") == true)
        // A single dash is a mistyped flag too, not a silent positional argument.
        #expect(usageError(["-help"])?.contains("-help") == true)
        #expect(usageError(["-v"])?.contains("-v") == true)
    }

    @Test("a flag without its value is an error naming it and its placeholder")
    func missingValue() {
        #expect(usageError(["--db"]) == "--db needs a value (PATH)")
        #expect(usageError(["run", "--seed"]) == "--seed needs a value (N)")
    }

    @Test("bad numbers are errors naming the flag and the text")
    func badNumbers() throws {
        let options = try Self.spec.parse(["--seed", "seven", "--drop", "1.5"])
        #expect(throws: LabError.self) { try options.int("seed") }
        #expect(usageError(["--seed"]) != nil)
        do {
            _ = try options.int("seed")
        } catch {
            #expect("\(error)" == #"--seed must be an integer, got "seven""#)
        }
        do {
            _ = try options.probability("drop")
            Issue.record("1.5 accepted as a probability")
        } catch {
            #expect("\(error)" == "--drop must be between 0 and 1, got 1.5")
        }
    }

    @Test("--help and -h ask for help; after -- everything is positional")
    func helpAndDoubleDash() throws {
        #expect(try Self.spec.parse(["--help"]).helpRequested)
        #expect(try Self.spec.parse(["--db", "x", "-h"]).helpRequested)
        let options = try Self.spec.parse(["--", "--help", "--db", "-5"])
        #expect(!options.helpRequested)
        #expect(options.positional == ["--help", "--db", "-5"])
        #expect(options.string("db") == nil)
        // A negative number is an argument, not a flag.
        #expect(try Self.spec.parse(["-5"]).positional == ["-5"])
    }

    @Test("the help text lists every flag with its placeholder, help and default")
    func helpText() {
        let help = Self.spec.help
        #expect(help.hasPrefix("synclab-example — an example command\n\nUsage: synclab-example [options] FILE…\n"))
        let lines = help.split(separator: "\n").map(String.init)
        func line(_ flag: String) -> String? { lines.first { $0.hasPrefix("  --\(flag) ") || $0 == "  --\(flag)" } }
        #expect(line("db")?.contains("PATH") == true)
        #expect(line("db")?.contains("the SQLite file") == true)
        #expect(line("db")?.contains("default") == false)
        #expect(line("listen")?.hasSuffix("where devices connect (default: tcp://127.0.0.1:5555)") == true)
        #expect(line("seed")?.hasSuffix("(default: 1)") == true)
        #expect(line("verbose")?.contains("echo events to stderr") == true)
        #expect(line("help")?.contains("show this help") == true)
        // A flag too long for the column gets its help on the next line, aligned with the others.
        let long = lines.firstIndex { $0.hasPrefix("  --a-very-long-flag-name-for-layout SOMETHING") }
        let next = long.map { lines[$0 + 1] } ?? ""
        #expect(next.drop(while: { $0 == " " }) == "wraps onto its own line")
        let db = line("db") ?? ""
        let column = db.range(of: "the SQLite file").map { db.distance(from: db.startIndex, to: $0.lowerBound) }
        #expect(next.prefix(while: { $0 == " " }).count == column)
        #expect(help.hasSuffix("Start by hand: synclab-example --db /tmp/x.sqlite\n"))
        #expect(lines.allSatisfy { $0.count <= 120 })
    }
}
