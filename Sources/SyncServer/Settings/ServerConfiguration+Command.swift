import LabKit

extension ServerConfiguration {
    /// `synclab-server`'s flags and help: its wiring, the flags every process takes (`ProcessFlags`) and its
    /// settings (`ServerSettings.knobs`).
    public static let command = CommandSpec(
        name: "synclab-server",
        summary: "the SyncLab sync server: applies ops exactly once, serves pulls from a cursor, notifies the broker",
        usage: "synclab-server --db PATH --listen ENDPOINT [--accounts PATH] [--notify ENDPOINT] [options]",
        flags: [
            Flag("db", value: "PATH", help: "the server's SQLite file, created if missing (required)"),
            Flag("listen", value: "ENDPOINT",
                 help: "bind the device ROUTER here, e.g. tcp://127.0.0.1:5550 (required)"),
            Flag("accounts", value: "PATH",
                help: "accounts file loaded into the database at start (default: none, use the db's devices)"),
            Flag("notify", value: "ENDPOINT",
                 help: "connect to the broker here for head-moved notices (default: none, no notices)"),
            Flag("broker-key-file", value: "PATH",
                 help: "the broker's public key file, for --notify under CURVE (with --key-file)"),
        ] + ProcessFlags.flags(role: "server", defaultName: "server",
                               commands: "ping, faults, stats, stop, addDevice, crashAt", seeds: "the fault decisions")
            + ServerSettings.commandFlags,
        footer: """
            \(ServerSettings.topologyHelp(block: "server"))
            With CURVE (docs/SECURITY.md): make keys with `synclab keys --out DIR server broker launcher pixel`, put
            each device's public key in the accounts file ("publicKey"), and add
              --key-file DIR/server.secret --launcher-key-file DIR/launcher.public --broker-key-file DIR/broker.public
            Start one by hand (no CURVE):
              echo '{"accounts":[{"id":"acme","devices":[{"id":"pixel","platform":"android","token":"t1"}]}]}' \\
                  > accounts.json
              synclab-server --db server.sqlite --listen tcp://127.0.0.1:5550 --accounts accounts.json \\
                  --control tcp://127.0.0.1:5551 --events events.jsonl
            Devices connect a DEALER to --listen and say hello (docs/PROTOCOL.md); the launcher or a DEALER on
            --control sends control commands (docs/ARCHITECTURE.md). SIGTERM, SIGINT or the control command stop it.
            Exit status: 0 stopped cleanly, 1 failed while serving, 2 bad flags or could not start.
            Crash points (--crash-at, control crashAt {point, nth}):
            \(CrashPoint.helpText(role: "server"))
            """
    )

    /// Reads the configuration from parsed flags, checking every value.
    public init(options: ParsedOptions) throws(ServerError) {
        do {
            guard options.positional.isEmpty else {
                throw ServerError.usage("unexpected argument \"\(options.positional[0])\" (see synclab-server --help)")
            }
            self.init(databasePath: try options.require("db"), listen: try options.require("listen"))
            notify = options.string("notify").flatMap { $0.isEmpty ? nil : $0 }
            accountsPath = options.string("accounts")
            process = try ProcessFlags(options, role: "server")
            try settings.apply(options)
            brokerKeyFile = options.string("broker-key-file")
            if process.keyFile != nil {
                guard accountsPath != nil else {
                    throw ServerError.usage("--key-file needs --accounts: it names the devices' public keys")
                }
                guard notify == nil || brokerKeyFile != nil else {
                    throw ServerError.usage("--key-file with --notify needs --broker-key-file")
                }
            } else if process.launcherKeyFile != nil || brokerKeyFile != nil {
                throw ServerError.usage("--launcher-key-file and --broker-key-file need --key-file")
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw .usage("\(error)")
        }
    }
}
