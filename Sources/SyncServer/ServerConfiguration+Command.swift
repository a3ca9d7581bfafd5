import LabKit
import SQLite

extension ServerConfiguration {
    /// `synclab-server`'s flags and help.
    public static let command = CommandSpec(
        name: "synclab-server",
        summary: "the SyncLab sync server: applies ops exactly once, serves pulls from a cursor, notifies the broker",
        usage: "synclab-server --db PATH --listen ENDPOINT [--accounts PATH] [--notify ENDPOINT] [options]",
        flags: [
            Flag("db", value: "PATH", help: "the server's SQLite file, created if missing (required)"),
            Flag("listen", value: "ENDPOINT",
                 help: "bind the device ROUTER here, e.g. tcp://127.0.0.1:5550 (required)"),
            Flag("accounts", value: "PATH", help: "accounts file loaded into the database at start (default: none, use the db's devices)"),
            Flag("notify", value: "ENDPOINT",
                 help: "connect to the broker here for head-moved notices (default: none, no notices)"),
            Flag("notify-mode", value: "push|pub", default: "push",
                 help: "push: a notice that would block is dropped; pub: lost silently if slow"),
            Flag("notify-hwm", value: "N", default: "1000", help: "notices queued for the broker before loss"),
            Flag("control", value: "ENDPOINT",
                 help: "bind a control ROUTER here: ping, faults, stats, stop, addDevice, crashAt (default: none)"),
            Flag("events", value: "PATH", help: "append events here, one JSON object a line (default: none)"),
            Flag("name", value: "NAME", default: "server", help: "the proc field of events"),
            Flag("epoch", value: "MICROS", help: "wall µs of the run's simulated time 0 (default: now)"),
            Flag("time-scale", value: "X", default: "1", help: "simulated seconds per real second"),
            Flag("seed", value: "N", default: "1", help: "seed of the fault decisions"),
            Flag("drop-reply", value: "P", default: "0", help: "probability a push's reply is dropped after commit"),
            Flag("drop-request", value: "P", default: "0",
                 help: "probability a push is dropped before its commit: nothing applied, no reply"),
            Flag("transient", value: "P", default: "0", help: "probability a push is answered retryLater, unapplied"),
            Flag("reject", value: "P", default: "0", help: "probability each new op is rejected(\"injected\")"),
            Flag("reply-delay-ms", value: "N", default: "0", help: "delay every reply to a device by N ms"),
            Flag("fail-commit", value: "P", default: "0",
                 help: "probability a push's commit fails after its ops were decided (nothing applied)"),
            Flag("idempotency", value: "on|off", default: "on",
                 help: "design switch: off applies a resend with a known key again (docs/TOPOLOGY.md)"),
            Flag("notice-before-commit", help: "design switch: send the head-moved notice before the commit"),
            Flag("reply-before-commit", help: "design switch: send a push's reply before its commit"),
            Flag("switch-accounts", value: "ID,ID",
                 help: "the design switches apply to these accounts only (default: all)"),
            Flag("synchronous", value: "full|normal", default: "normal",
                 help: "SQLite synchronous: normal (survives kill -9) or full (fsync per commit)"),
            Flag("crash-at", value: "POINT[@N]",
                 help: "SIGKILL itself the Nth time it reaches POINT (below); repeatable (default: none)"),
            Flag("key-file", value: "PATH",
                 help: "CURVE on every socket: this server's secret key file, mode 0600 (default: none, NULL)"),
            Flag("launcher-key-file", value: "PATH",
                 help: "the public key file of the only client the control socket admits (with --key-file)"),
            Flag("broker-key-file", value: "PATH",
                 help: "the broker's public key file, for --notify under CURVE (with --key-file)"),
        ],
        footer: """
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
            let mode = options.string("notify-mode") ?? "push"
            guard let notifyMode = NotifyMode(rawValue: mode) else {
                throw ServerError.usage("--notify-mode must be push or pub, got \"\(mode)\"")
            }
            self.notifyMode = notifyMode
            notifyHighWaterMark = try options.int("notify-hwm") ?? 1000
            guard (1...1_000_000).contains(notifyHighWaterMark) else {
                throw ServerError.usage("--notify-hwm must be from 1 to 1000000, got \(notifyHighWaterMark)")
            }
            accountsPath = options.string("accounts")
            control = options.string("control")
            eventsPath = options.string("events")
            name = options.string("name") ?? "server"
            if let epoch = try options.int("epoch") { epochMicros = Int64(epoch) }
            timeScale = try options.double("time-scale") ?? 1
            guard timeScale > 0, timeScale.isFinite else {
                throw ServerError.usage("--time-scale must be a positive number, got \(timeScale)")
            }
            let seedText = options.string("seed") ?? "1"
            guard let seed = UInt64(seedText) else {
                throw ServerError.usage("--seed must be a non-negative integer, got \"\(seedText)\"")
            }
            self.seed = seed
            let delay = try options.int("reply-delay-ms") ?? 0
            guard (0...600_000).contains(delay) else {
                throw ServerError.usage("--reply-delay-ms must be from 0 to 600000, got \(delay)")
            }
            faults = ServerFaults(dropReply: try options.probability("drop-reply"),
                                  transient: try options.probability("transient"),
                                  reject: try options.probability("reject"), replyDelayMs: delay,
                                  dropRequest: try options.probability("drop-request"))
            for value in options.all("crash-at") {
                crashAt += try CrashPoints.parse(value, role: "server")
            }
            keyFile = options.string("key-file")
            launcherKeyFile = options.string("launcher-key-file")
            brokerKeyFile = options.string("broker-key-file")
            if keyFile != nil {
                guard accountsPath != nil else {
                    throw ServerError.usage("--key-file needs --accounts: it names the devices' public keys")
                }
                guard control == nil || launcherKeyFile != nil else {
                    throw ServerError.usage("--key-file with --control needs --launcher-key-file: the control "
                        + "socket admits only that key")
                }
                guard notify == nil || brokerKeyFile != nil else {
                    throw ServerError.usage("--key-file with --notify needs --broker-key-file")
                }
            } else if launcherKeyFile != nil || brokerKeyFile != nil {
                throw ServerError.usage("--launcher-key-file and --broker-key-file need --key-file")
            }
            faults.failCommit = try options.probability("fail-commit")
            let idempotency = options.string("idempotency") ?? "on"
            guard idempotency == "on" || idempotency == "off" else {
                throw ServerError.usage("--idempotency must be on or off, got \"\(idempotency)\"")
            }
            switches = ServerSwitches(idempotency: idempotency == "on",
                                      noticeBeforeCommit: options.has("notice-before-commit"),
                                      replyBeforeCommit: options.has("reply-before-commit"),
                                      accounts: options.string("switch-accounts").map {
                                          Set($0.split(separator: ",").map(String.init))
                                      })
            let sync = options.string("synchronous") ?? "normal"
            switch sync {
            case "full": synchronous = .full
            case "normal": synchronous = .normal
            default: throw ServerError.usage("--synchronous must be full or normal, got \"\(sync)\"")
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw .usage("\(error)")
        }
    }
}
