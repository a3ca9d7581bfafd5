import Foundation
import LabKit
import SyncProtocol

/// `synclab-device program`: an outside device's lab side. Every flag of `synclab-device`, plus the program.
public enum ProgramCommandLine {
    public static let spec = CommandSpec(
        name: "synclab-device program",
        summary: "an outside device: the lab keeps the platform model, the broker link and the user's actions, and "
            + "runs the program (any language) that owns the server connection, the SQLite file and the pass",
        usage: "synclab-device program --program-json '[\"python3\",\"device.py\"]' [synclab-device's flags]",
        flags: [
            Flag("program-json", value: "JSON", help: "the program and its own arguments, a JSON array of strings "
                + "(required); the device's flags follow them (docs/DEVICE-CONTRACT.md)"),
            Flag("program-timeout-ms", value: "MS", default: "10000",
                 help: "real ms the program may take to say ready and to answer any request"),
        ] + DeviceCommandLine.spec.flags,
        footer: "docs/DEVICE-CONTRACT.md: the lines the program reads and writes, its events, its SQLite schema."
    )

    /// The device's configuration and the program's, from parsed flags; throws `LabError.usage` naming what is wrong.
    public static func configuration(_ options: ParsedOptions) throws -> (DeviceConfiguration, ProgramConfiguration) {
        let device = try DeviceCommandLine.configuration(options)
        let text = try options.require("program-json")
        guard let value = try? JSONValue.parse(text), case .array(let items) = value, !items.isEmpty,
              case let words = items.compactMap(\.stringValue), words.count == items.count, !words[0].isEmpty
        else {
            throw LabError.usage("--program-json must be a non-empty JSON array of strings, got \(text)")
        }
        let timeout = try options.int("program-timeout-ms") ?? 10_000
        guard timeout > 0 else { throw LabError.usage("--program-timeout-ms must be more than 0") }
        let argv = words + programFlags(device, options)
        return (device, ProgramConfiguration(argv: argv, answerWithinMs: timeout,
                                             pidFile: device.databasePath + ".program.pid"))
    }

    /// What the program is told (docs/DEVICE-CONTRACT.md, "Start-up"): who it is, its file, its server and keys, the
    /// run's clock, and the pass's bounds. Never the control or broker endpoints: those are the lab's.
    static func programFlags(_ device: DeviceConfiguration, _ options: ParsedOptions) -> [String] {
        let s = device.settings
        var flags = ["--id", device.identity.device, "--account", device.identity.account]
        if let file = options.string("token-file") {
            flags += ["--token-file", file]
        } else {
            flags += ["--token", device.identity.token]
        }
        flags += ["--platform", device.identity.platform.rawValue, "--db", device.databasePath,
                  "--server", device.serverEndpoint]
        if let keys = device.keys { flags += ["--key-file", keys.keyFile, "--server-key-file", keys.serverKeyFile] }
        flags += ["--epoch", String(device.clock.epochMicros), "--time-scale", device.clock.scale.flagText,
                  "--seed", String(device.seed), "--batch", String(s.batch), "--page-limit", String(s.pageLimit),
                  "--max-pages", String(s.maxPages), "--reply-timeout-ms", String(s.replyTimeoutMs),
                  "--max-attempts", String(s.maxAttempts)]
        return flags
    }
}
