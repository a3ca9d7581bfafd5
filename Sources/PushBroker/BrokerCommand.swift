import LabKit

/// The command line of `synclab-broker`: its flags with their defaults, and their parsing into a configuration.
public enum BrokerCommand {
    public static let spec = CommandSpec(
        name: "synclab-broker",
        summary: "the lab's push service: turns the server's notices into hints, as APNs, FCM or Web Push would",
        usage: "synclab-broker --listen ENDPOINT --notices ENDPOINT --accounts PATH [options]",
        flags: [
            Flag("listen", value: "ENDPOINT",
                 help: "device ROUTER to bind (register, deviceState; hints out); required"),
            Flag("notices", value: "ENDPOINT", help: "socket to bind for the server's notices; required"),
            Flag("notices-mode", value: "pull|sub", default: "pull",
                 help: "PULL (lossless) or SUB (ZeroMQ drops past the HWM and before subscribing)"),
            Flag("notices-hwm", value: "N", default: "1000", help: "receive high-water mark of the notices socket"),
            Flag("hint-hwm", value: "N", default: "1000",
                 help: "send high-water mark per device; a hint past it is dropped (reason hwm); 0: no limit"),
            Flag("accounts", value: "PATH", help: "the run's accounts file (docs/ARCHITECTURE.md); required"),
            Flag("control", value: "ENDPOINT",
                 help: "control ROUTER to bind (ping, stop, stats, chaos, crashAt); default: none"),
            Flag("events", value: "PATH", help: "append events here, one JSON object a line; default: none"),
            Flag("name", value: "NAME", default: "broker", help: "the proc field of the events"),
            Flag("epoch", value: "MICROS", help: "simulated time 0, wall µs since the Unix epoch; default: at start"),
            Flag("time-scale", value: "X", default: "1", help: "simulated seconds per real second"),
            Flag("seed", value: "N", default: "1", help: "seed of every random decision"),
            Flag("profile-android", value: "PROFILE", default: "fcm",
                 help: "profile of android devices: apns|fcm|webpush"),
            Flag("profile-ios", value: "PROFILE", default: "apns",
                 help: "profile of ios devices: apns|fcm|webpush"),
            Flag("profile-web", value: "PROFILE", default: "webpush",
                 help: "profile of web devices: apns|fcm|webpush"),
            Flag("apns-throttle-per-hour", value: "N", default: "3",
                 help: "apns: background hints per device in any sliding simulated hour; 0: no throttle"),
            Flag("fcm-max-held", value: "N", default: "100",
                 help: "fcm: hints stored per offline device; one more deletes them all (resync on return)"),
            Flag("fcm-priority", value: "high|normal", default: "high",
                 help: "fcm: normal waits for the next doze maintenance window, high wakes the device"),
            Flag("fcm-collapse", value: "none|account", default: "none",
                 help: "fcm: account = the account is the collapse key (one stored per key, at most 4 keys)"),
            Flag("doze-window-min", value: "MIN", default: "60",
                 help: "fcm: simulated minutes between doze maintenance windows"),
            Flag("webpush-ttl-sec", value: "SEC", default: "86400",
                 help: "webpush: simulated seconds a hint is kept for an unreachable browser"),
            Flag("loss", value: "P", default: "0", help: "chaos: probability a hint is lost (reason chaos-loss)"),
            Flag("duplicate", value: "P", default: "0", help: "chaos: probability a delivered hint is sent twice"),
            Flag("delay-kind", value: "KIND", default: "none",
                 help: "chaos: delay before the profile: none|constant|uniform|exponential"),
            Flag("delay-sec", value: "SEC", default: "0",
                 help: "chaos: the delay (constant), or its mean (uniform on [0, 2x), exponential), simulated seconds"),
            Flag("reorder", value: "P", default: "0",
                 help: "chaos: probability a hint waits until the device's next hint has overtaken it"),
            Flag("reorder-window-sec", value: "SEC", default: "60",
                 help: "chaos: simulated seconds a reordered hint waits at most"),
            Flag("hint-carries-data",
                 help: "design switch: hints carry the notice's changes (data in the push), not only a reference "
                     + "(default: off, hints are references)"),
            Flag("hint-data-accounts", value: "ID,ID",
                 help: "--hint-carries-data applies to these accounts only (default: all accounts)"),
            Flag("crash-at", value: "POINT[@N]",
                 help: "SIGKILL itself the Nth time it reaches POINT (below); repeatable (default: none)"),
            Flag("key-file", value: "PATH",
                 help: "CURVE on every socket: the broker's secret key file, mode 0600 (default: none, NULL)"),
            Flag("launcher-key-file", value: "PATH",
                 help: "the public key file of the only client --control admits (with --key-file; default: none)"),
            Flag("server-key-file", value: "PATH",
                 help: "the server's public key file: the only key --notices admits (with --key-file; default: none)"),
        ],
        footer: """
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
        config.noticesMode = try choice("notices-mode", options)
        config.noticesHWM = try count("notices-hwm", options)
        config.hintHWM = try count("hint-hwm", options)
        config.control = options.string("control")
        config.events = options.string("events")
        config.name = try options.require("name")
        if let text = options.string("epoch") {
            guard let epoch = Int64(text) else { throw LabError.usage("--epoch must be wall µs, got \"\(text)\"") }
            config.epochMicros = epoch
        }
        config.timeScale = try positive("time-scale", options)
        guard let seedText = options.string("seed"), let seed = UInt64(seedText) else {
            throw LabError.usage("--seed must be a non-negative integer, got \"\(options.string("seed") ?? "")\"")
        }
        config.seed = seed

        var profiles = ProfileSettings()
        profiles.android = try choice("profile-android", options)
        profiles.ios = try choice("profile-ios", options)
        profiles.web = try choice("profile-web", options)
        profiles.apnsThrottlePerHour = Int(try count("apns-throttle-per-hour", options))
        profiles.fcmMaxHeld = Int(try count("fcm-max-held", options))
        profiles.fcmPriority = try choice("fcm-priority", options)
        profiles.fcmCollapse = try choice("fcm-collapse", options)
        profiles.dozeWindowSec = try positive("doze-window-min", options) * 60
        profiles.webpushTTLSec = try nonNegative("webpush-ttl-sec", options)
        config.profiles = profiles

        config.chaos = ChaosSettings(
            loss: try options.probability("loss"), duplicate: try options.probability("duplicate"),
            delayKind: try choice("delay-kind", options), delaySec: try nonNegative("delay-sec", options),
            reorder: try options.probability("reorder"))
        config.reorderWindowSec = try nonNegative("reorder-window-sec", options)
        config.hintCarriesData = options.has("hint-carries-data")
        config.hintDataAccounts = options.string("hint-data-accounts").map {
            Set($0.split(separator: ",").map(String.init))
        }
        for value in options.all("crash-at") {
            config.crashAt += try CrashPoints.parse(value, role: "broker")
        }
        config.keyFile = options.string("key-file")
        config.launcherKeyFile = options.string("launcher-key-file")
        config.serverKeyFile = options.string("server-key-file")
        if config.keyFile != nil {
            guard config.control == nil || config.launcherKeyFile != nil else {
                throw LabError.usage("--key-file with --control needs --launcher-key-file: the control socket "
                    + "admits only that key")
            }
            guard config.serverKeyFile != nil else {
                throw LabError.usage("--key-file needs --server-key-file: the notices socket admits only that key")
            }
        } else if config.launcherKeyFile != nil || config.serverKeyFile != nil {
            throw LabError.usage("--launcher-key-file and --server-key-file need --key-file")
        }
        return config
    }

    private static func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ options: ParsedOptions) throws -> T
    where T.RawValue == String {
        let text = options.string(name) ?? ""
        guard let value = T(rawValue: text) else {
            let known = T.allCases.map(\.rawValue).joined(separator: "|")
            throw LabError.usage("--\(name) must be \(known), got \"\(text)\"")
        }
        return value
    }

    private static func count(_ name: String, _ options: ParsedOptions) throws -> Int32 {
        guard let value = try options.int(name), value >= 0, value <= Int(Int32.max) else {
            throw LabError.usage("--\(name) must be an integer >= 0, got \"\(options.string(name) ?? "")\"")
        }
        return Int32(value)
    }

    private static func nonNegative(_ name: String, _ options: ParsedOptions) throws -> Double {
        guard let value = try options.double(name), value.isFinite, value >= 0 else {
            throw LabError.usage("--\(name) must be a number >= 0, got \"\(options.string(name) ?? "")\"")
        }
        return value
    }

    private static func positive(_ name: String, _ options: ParsedOptions) throws -> Double {
        guard let value = try options.double(name), value.isFinite, value > 0 else {
            throw LabError.usage("--\(name) must be a number > 0, got \"\(options.string(name) ?? "")\"")
        }
        return value
    }
}
