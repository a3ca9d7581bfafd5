import LabKit
import SyncProtocol

/// `synclab-device pool`: many devices in one process. The shared flags are a separate device's, minus what each
/// device has of its own (id, account, token, platform, db, engagement, start state, charging), which the spec lists.
public enum DevicePoolCommandLine {
    /// The per-device flags a pool takes from its spec instead of its command line.
    static let perDevice: Set<String> = ["id", "account", "token", "token-file", "key-file", "platform", "db",
                                         "engagement", "start-state", "charging", "name", "control", "events"]

    /// Flags of `synclab-device pool`, with their defaults.
    public static let spec = CommandSpec(
        name: "synclab-device pool",
        summary: "many client devices in one process: one IO thread, one poll over every device's sockets, each "
            + "device with its own ledger, cursor, platform model, identity and DEALERs to the server and broker",
        usage: "synclab-device pool --spec FILE --server ENDPOINT [--broker ENDPOINT] [--control ENDPOINT] [options]",
        flags: [
            Flag("spec", value: "FILE", help: "JSON listing the devices: {\"devices\": [{\"id\", \"account\", "
                + "\"token\" or \"tokenFile\", \"platform\", \"db\", \"engagement\"?, \"startState\"?, \"charging\"?, "
                + "\"keyFile\"? (CURVE: the device's own secret key file), \"flags\"? (this device's own device "
                    + "settings, "
                + "e.g. {\"batch\": \"10\"})}]} (required)"),
            Flag("control", value: "ENDPOINT", help: "bind ONE ROUTER for the pool; a command for one device carries "
                + "args.device = its id; without args.device: ping, stop, statusAll, syncAll"),
            Flag("events", value: "PATH", help: "append every pooled device's events here (proc = the device id)"),
            Flag("name", value: "NAME", default: "pool", help: "the proc field of the pool's own events"),
            Flag("key-file", value: "PATH", help: "CURVE: the pool's secret key file, for its control socket "
                + "(each device's own key is the spec's \"keyFile\")"),
        ] + DeviceCommandLine.spec.flags.filter { !perDevice.contains($0.name) },
        footer: """
            By hand (a server and a broker already running, see their --help), with devices.json
              {"devices": [{"id": "p1", "account": "acme", "token": "t-p1", "platform": "android",
                            "db": "/tmp/p1.sqlite"},
                           {"id": "p2", "account": "acme", "token": "t-p2", "platform": "ios", "db": "/tmp/p2.sqlite",
                            "startState": "foreground"}]}
            run
              synclab-device pool --spec devices.json --server tcp://127.0.0.1:7001 --broker tcp://127.0.0.1:7002 \\
                  --control tcp://127.0.0.1:7100 --events /tmp/pool.jsonl
            then talk to one device by naming it in the arguments, or to the whole pool:
              synclab-device control --to tcp://127.0.0.1:7100 edit '{"device":"p1","draft":"d1","action":"create"}'
              synclab-device control --to tcp://127.0.0.1:7100 syncAll '{"force":true}'
            Each device's state: statusAll, or once the pool has stopped (it holds its devices' ledgers
            exclusively while it runs) synclab-device status --db /tmp/p1.sqlite (docs/DEVICE.md, "Device pool").
            """
    )

    /// Builds the pool's configuration: the shared flags parsed once, then each device's configuration built by the
    /// same code as a separate device process's, so a pooled device is configured exactly like one.
    public static func configuration(_ options: ParsedOptions) throws -> DevicePoolConfiguration {
        let specPath = try options.require("spec")
        let spec = try DevicePoolSpec.read(path: specPath)
        var shared = options
        for name in perDevice { shared.values.removeValue(forKey: name) }
        shared.switches.remove("charging")
        // Defaults of the shared flags live in the pool's spec; make them explicit for the device parser.
        for flag in Self.spec.flags where shared.values[flag.name] == nil && !perDevice.contains(flag.name) {
            if let value = flag.defaultValue { shared.values[flag.name] = value }
        }
        // One epoch for every device, even when none was given: they share one simulated clock.
        if shared.values["epoch"] == nil { shared.values["epoch"] = String(SimClock.wallMicros()) }
        for value in options.all("crash-at") {
            for item in try CrashPoints.parse(value, role: "device") {
                if let named = item.device, !spec.devices.contains(where: { $0.id == named }) {
                    throw LabError.usage("--crash-at \(value): device \"\(named)\" is not in \(specPath)")
                }
            }
        }
        var devices: [DeviceConfiguration] = []
        for device in spec.devices {
            var own = shared
            own.values["id"] = device.id
            own.values["account"] = device.account
            if let token = device.token { own.values["token"] = token }
            if let tokenFile = device.tokenFile { own.values["token-file"] = tokenFile }
            if let keyFile = device.keyFile { own.values["key-file"] = keyFile }
            own.values["platform"] = device.platform
            own.values["db"] = device.db
            // Set explicitly: the pool's own `--name` default would otherwise become every device's `proc`.
            own.values["name"] = device.id
            own.values.removeValue(forKey: "control")
            own.values["engagement"] = (device.engagement ?? DeviceSettings().opensPerDay).flagText
            own.values["start-state"] = device.startState ?? DeviceSettings().startState.rawValue
            if device.charging == true { own.switches.insert("charging") }
            for (flag, value) in device.flags ?? [:] { own.values[flag] = value }
            if let events = options.values["events"] { own.values["events"] = events }
            do {
                devices.append(try DeviceCommandLine.configuration(own))
            } catch {
                throw LabError.usage("device \"\(device.id)\" in \(specPath): \(error)")
            }
        }
        let clock = devices[0].clock
        // The pool's own control socket, events file, name and CURVE key, read as every process reads them.
        let process = try ProcessFlags(options, role: "device")
        var configuration = DevicePoolConfiguration(devices: devices, controlEndpoint: process.control,
                                                    eventsPath: process.events, name: try options.require("name"),
                                                    clock: clock)
        if let keyFile = process.keyFile {
            configuration.keyFile = keyFile
            configuration.launcherKeyFile = process.launcherKeyFile
        }
        return configuration
    }
}
