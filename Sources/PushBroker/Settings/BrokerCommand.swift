import LabKit

/// The command line of `synclab-broker`: its wiring, the flags every process takes (`ProcessFlags`) and its settings
/// (`BrokerSettings.knobs`), with their defaults, and their parsing into a configuration.
public enum BrokerCommand {
    public static let spec = CommandSpec(
        name: "synclab-broker",
        summary: "the lab's push service: turns the server's notices into hints, as APNs, FCM or Web Push would",
        usage: "synclab-broker --listen ENDPOINT --notices ENDPOINT --accounts PATH [options]",
        flags: [
            Flag("listen", value: "ENDPOINT",
                 help: "device ROUTER to bind (register, deviceState; hints out); required"),
            Flag("notices", value: "ENDPOINT", help: "socket to bind for the server's notices; required"),
            Flag("accounts", value: "PATH", help: "the run's accounts file (docs/ARCHITECTURE.md); required"),
            Flag("server-key-file", value: "PATH",
                 help: "the server's public key file: the only key --notices admits (with --key-file; default: none)"),
        ] + ProcessFlags.flags(role: "broker", defaultName: "broker", commands: "ping, stop, stats, chaos, crashAt",
                               seeds: "every random decision")
            + BrokerSettings.commandFlags,
        footer: """
            \(BrokerSettings.topologyHelp(block: "broker"))
            Start by hand (the accounts file format is in docs/ARCHITECTURE.md, the profiles in docs/BROKER.md):
              synclab-broker --listen tcp://127.0.0.1:7302 --notices tcp://127.0.0.1:7301 \\
                --control tcp://127.0.0.1:7303 --accounts accounts.json --events broker.jsonl --seed 7 --loss 0.1
            With CURVE (docs/SECURITY.md) add --key-file DIR/broker.secret --launcher-key-file DIR/launcher.public
              --server-key-file DIR/server.public (keys from `synclab keys --out DIR …`; devices' keys in the
              accounts file's "publicKey").
            Devices connect a DEALER to --listen; the server connects a PUSH (or PUB) to --notices.
            SIGTERM, SIGINT or the control command stop: clean stop, exit 0. Exit 2: bad flags or accounts file.
            Crash points (--crash-at, control crashAt {point, nth}):
            \(CrashPoint.helpText(role: "broker"))
            """
    )

    /// The configuration the options describe; throws a usage error naming the bad flag.
    public static func configuration(from options: ParsedOptions) throws -> BrokerConfiguration {
        guard options.positional.isEmpty else {
            throw LabError.usage("unexpected argument \"\(options.positional[0])\" (see synclab-broker --help)")
        }
        var config = BrokerConfiguration(listen: try options.require("listen"), notices: try options.require("notices"),
                                         accountsPath: try options.require("accounts"))
        config.process = try ProcessFlags(options, role: "broker")
        try config.settings.apply(options)
        config.serverKeyFile = options.string("server-key-file")
        if config.process.keyFile != nil {
            guard config.serverKeyFile != nil else {
                throw LabError.usage("--key-file needs --server-key-file: the notices socket admits only that key")
            }
        } else if config.process.launcherKeyFile != nil || config.serverKeyFile != nil {
            throw LabError.usage("--launcher-key-file and --server-key-file need --key-file")
        }
        return config
    }
}
