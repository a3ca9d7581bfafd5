import LabKit

/// The usage checks every `synclab` command makes of its arguments, and its one way to say an error, each on stderr.
extension ParsedOptions {
    /// The positional arguments when there are `count` of them; otherwise nil, after writing `message` and the
    /// command's help.
    func positionals(_ count: Int, orSay message: String, help: String) -> [String]? {
        guard positional.count == count else {
            Output.stderr(message + "\n\n" + help)
            return nil
        }
        return positional
    }

    /// A whole-number option (or its default) of at least `minimum`; otherwise nil, after writing why as `command`.
    func count(_ name: String, default value: Int, atLeast minimum: Int, command: String) -> Int? {
        do {
            let n = try int(name) ?? value
            guard n >= minimum else {
                throw LabError.usage("--\(name) must be " + (minimum == 0 ? "0 or more" : "at least \(minimum)"))
            }
            return n
        } catch {
            Output.stderr("\(command): \(error)\n")
            return nil
        }
    }
}

extension LauncherCommand {
    /// `body`'s value, or nil after writing `say(error)` as a line on stderr: how a command turns what it could not
    /// read or start into exit status 2.
    static func orSay<T>(_ say: (Error) -> String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            Output.stderr(say(error) + "\n")
            return nil
        }
    }
}
