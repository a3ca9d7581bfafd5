/// The flags every lab process takes, spelled once: its control socket, its events file and `proc` name, the run's
/// clock (epoch, time scale) and seed, crash points armed from the start, and its own CURVE keys. `synclab-server`,
/// `synclab-broker` and `synclab-device` list them with `flags(for:)` and read them with `init(_:role:)`; the
/// launcher writes them with `arguments`.
public struct ProcessFlags: Sendable, Equatable {
    /// Bind a control ROUTER here.
    public var control: String?
    /// Append events here, one JSON object a line.
    public var events: String?
    /// The `proc` field of its events; nil: the role's own name (a device's id).
    public var name: String?
    /// Wall µs of the run's simulated time 0; nil: when the process starts.
    public var epochMicros: Int64?
    /// Simulated seconds per real second.
    public var timeScale: Double = 1
    /// Seed of the process's random decisions.
    public var seed: UInt64 = 1
    /// Crash points armed from the start (`--crash-at`), with the occurrence each fires on.
    public var crashAt: [ArmedCrash] = []
    /// CURVE (docs/SECURITY.md): the process's secret key file; nil: NULL on every socket.
    public var keyFile: String?
    /// The launcher's public key file: the only key the control socket admits.
    public var launcherKeyFile: String?

    public init() {}

    /// The flags, with their defaults, in the order `--help` lists them. What differs between the roles is words of
    /// help: `role` ("server", "broker" or "device": whose crash points `--crash-at` takes), the default `proc` name,
    /// the control commands and what the seed seeds.
    public static func flags(role: String, defaultName: String, commands: String, seeds: String) -> [Flag] {
        let defaults = ProcessFlags()
        return [
            Flag("control", value: "ENDPOINT", help: "bind a control ROUTER here: \(commands) (default: none)"),
            Flag("events", value: "PATH", help: "append events here, one JSON object a line (default: none)"),
            Flag("name", value: "NAME", help: "the proc field of its events (default: \(defaultName))"),
            Flag("epoch", value: "MICROS", help: "wall µs since 1970 of the run's simulated time 0 (default: now)"),
            Flag("time-scale", value: "X", default: defaults.timeScale.flagText,
                help: "simulated seconds per real second"),
            Flag("seed", value: "N", default: String(defaults.seed), help: "seed of \(seeds)"),
            Flag("crash-at", value: role == "device" ? "[DEVICE:]POINT[@N]" : "POINT[@N]",
                 help: "SIGKILL itself the Nth time it reaches POINT (below); repeatable"
                    + (role == "device" ? "; in a pool DEVICE: names the device" : "") + " (default: none)"),
            Flag("key-file", value: "PATH",
                 help: "CURVE on every socket: its secret key file, mode 0600 (default: none, NULL)"),
            Flag("launcher-key-file", value: "PATH",
                 help: "CURVE: public key file of the one client --control admits (with --key-file; default: none)"),
        ]
    }

    /// Reads the flags; the error names the flag and what it takes.
    public init(_ options: ParsedOptions, role: String) throws(LabError) {
        control = options.values["control"].flatMap { $0.isEmpty ? nil : $0 }
        events = options.values["events"]
        name = options.values["name"]
        if let text = options.values["epoch"] {
            guard let epoch = Int64(text) else { throw .usage("--epoch must be wall µs since 1970, got \"\(text)\"") }
            epochMicros = epoch
        }
        if let text = options.values["time-scale"] {
            guard let scale = Double(text), scale > 0, scale.isFinite else {
                throw .usage("--time-scale must be above 0 (simulated seconds per real second), got \"\(text)\"")
            }
            timeScale = scale
        }
        if let text = options.values["seed"] {
            guard let seed = UInt64(text) else { throw .usage("--seed must be a whole number 0 or more, got "
                + "\"\(text)\"") }
            self.seed = seed
        }
        for value in options.all("crash-at") {
            do {
                crashAt += try CrashPoints.parse(value, role: role)
            } catch let error as LabError {
                throw error
            } catch {
                throw .usage("--crash-at \(value): \(error)")
            }
        }
        keyFile = options.values["key-file"]
        launcherKeyFile = options.values["launcher-key-file"]
        guard keyFile == nil || control == nil || launcherKeyFile != nil else {
            throw .usage("--key-file with --control needs --launcher-key-file: the control socket admits only that key")
        }
    }

    /// The flags that give a process these values (`--time-scale` and `--seed` always, the rest when set).
    public var arguments: [String] {
        var out: [String] = []
        if let control { out += ["--control", control] }
        if let events { out += ["--events", events] }
        if let name { out += ["--name", name] }
        if let epochMicros { out += ["--epoch", String(epochMicros)] }
        out += ["--time-scale", timeScale.flagText, "--seed", String(seed)]
        for item in crashAt {
            out += ["--crash-at", (item.device.map { "\($0):" } ?? "") + item.point.rawValue + "@\(item.nth)"]
        }
        if let keyFile { out += ["--key-file", keyFile] }
        if let launcherKeyFile { out += ["--launcher-key-file", launcherKeyFile] }
        return out
    }
}
