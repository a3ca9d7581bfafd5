import Foundation
import LabKit
import SQLite
import SyncProtocol

/// `synclab-device`'s command lines: running a device, and `status --db PATH`.
public enum DeviceCommandLine {
    /// Flags of a running device, with their defaults.
    public static let spec = CommandSpec(
        name: "synclab-device",
        summary: "one client device: operation ledger, replica, cursor, sync pass, triggers, platform scheduler model",
        usage: "synclab-device --id D --account A --token T --platform android|ios|web --db PATH --server ENDPOINT "
            + "[--broker ENDPOINT] [--control ENDPOINT] [options]\n       synclab-device status --db PATH [--json]"
            + "\n       synclab-device control --to ENDPOINT COMMAND [JSON-ARGS]"
            + "\n       synclab-device program --program-json JSON [flags] (outside device: docs/DEVICE-CONTRACT.md)",
        flags: [
            Flag("id", value: "D", help: "device id, as in the accounts file (required)"),
            Flag("account", value: "A", help: "account the device belongs to (required)"),
            Flag("token", value: "T",
                 help: "the device's secret token (visible in ps: prefer --token-file); one of the two is required"),
            Flag("token-file", value: "PATH", help: "a file holding the device's secret token (first line)"),
            Flag("platform", value: "P", help: "android, ios or web: which scheduler model runs (required)"),
            Flag("db", value: "PATH", help: "the device's SQLite file; created if missing, resumed if not (required)"),
            Flag("server", value: "ENDPOINT", help: "the server's ROUTER, e.g. tcp://127.0.0.1:7001 (required)"),
            Flag("broker", value: "ENDPOINT", help: "the broker's ROUTER; without it the device gets no hints"),
            Flag("server-key-file", value: "PATH", help: "CURVE: the server's public key file (with --key-file)"),
            Flag("broker-key-file", value: "PATH", help: "CURVE: the broker's public key file (with --broker)"),
            Flag("engagement", value: "N", default: DeviceSettings().opensPerDay.flagText,
                 help: "app opens per simulated day: iOS window budget, Android standby bucket"),
            Flag("start-state", value: "S", default: DeviceSettings().startState.rawValue,
                 help: "foreground, background or closed"),
            Flag("charging", help: "start plugged in"),
        ] + ProcessFlags.flags(role: "device", defaultName: "the device id", commands: "edit, open, sync, status, … "
            + "(below)",
                               seeds: "the platform model's random draws")
            + DeviceSettings.commandFlags,
        footer: """
            By hand (a server and a broker already running, see their --help):
              synclab-device --id pixel --account acme --token t-pixel --platform android --db /tmp/pixel.sqlite \\
                  --server tcp://127.0.0.1:7001 --broker tcp://127.0.0.1:7002 --control tcp://127.0.0.1:7101 \\
                  --start-state foreground --events /tmp/pixel.jsonl
            then send it control commands (edit, open, background, forceQuit, close, offline, online, plug, unplug,
            engagement, refresh, sync, status, ping, stop, crashAt) on --control, e.g.
              synclab-device control --to tcp://127.0.0.1:7101 edit '{"draft":"d1","action":"create","title":"Hi"}'
            (docs/DEVICE.md walks through a server, a broker and two devices by hand).
            A stopped or running device's state: synclab-device status --db /tmp/pixel.sqlite (a pooled device's
            once its pool has stopped: a running pool holds its ledgers exclusively)
            Crash points (--crash-at, control crashAt {point, nth}):
            \(CrashPoint.helpText(role: "device"))
            """
    )

    /// Flags of `synclab-device status`.
    public static let statusSpec = CommandSpec(
        name: "synclab-device status",
        summary: "print a device's status and seed-001 metrics from its database (running or stopped)",
        usage: "synclab-device status --db PATH [--json]",
        flags: [
            Flag("db", value: "PATH", help: "the device's SQLite file (required)"),
            Flag("json", help: "print JSON instead of text"),
        ]
    )

    /// Builds the configuration from parsed flags; throws `LabError.usage` naming what is wrong.
    public static func configuration(_ options: ParsedOptions) throws -> DeviceConfiguration {
        func id(_ name: String) throws -> String {
            let value = try options.require(name)
            guard value.utf8.count <= Limits.maxIDBytes else {
                throw LabError.usage("--\(name) is longer than \(Limits.maxIDBytes) bytes")
            }
            return value
        }
        let platformText = try options.require("platform")
        guard let platform = Platform(rawValue: platformText) else {
            throw LabError.usage("--platform must be android, ios or web, got \"\(platformText)\"")
        }
        let token: String
        if let path = options.string("token-file") {
            guard options.string("token") == nil else { throw LabError.usage("give --token or --token-file, not both") }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw LabError.usage("--token-file \(path): cannot read it")
            }
            token = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            guard !token.isEmpty, token.utf8.count <= Limits.maxIDBytes else {
                throw LabError.usage("--token-file \(path): the first line must be a token of 1…"
                    + "\(Limits.maxIDBytes) bytes")
            }
        } else {
            token = try id("token")
        }
        let identity = DeviceIdentity(device: try id("id"), account: try id("account"), token: token,
                                      platform: platform)
        let process = try ProcessFlags(options, role: "device")
        var keys: DeviceKeyFiles?
        if let keyFile = process.keyFile {
            guard let serverKey = options.string("server-key-file") else {
                throw LabError.usage("--key-file needs --server-key-file")
            }
            guard options.string("broker") == nil || options.string("broker-key-file") != nil else {
                throw LabError.usage("--key-file with --broker needs --broker-key-file")
            }
            keys = DeviceKeyFiles(keyFile: keyFile, serverKeyFile: serverKey,
                                  brokerKeyFile: options.string("broker-key-file"),
                                  launcherKeyFile: process.launcherKeyFile)
        }
        var settings = DeviceSettings()
        try settings.apply(options)
        guard settings.backoffCapSec >= settings.backoffBaseSec else {
            throw LabError.usage("--backoff-cap-sec must be at least --backoff-base-sec")
        }
        let engagement = try options.double("engagement") ?? 0
        guard engagement >= 0, engagement.isFinite else {
            throw LabError.usage("--engagement must be 0 or more opens per day, got \(engagement)")
        }
        settings.opensPerDay = engagement
        let startText = try options.require("start-state")
        guard let start = StartState(rawValue: startText) else {
            throw LabError.usage("--start-state must be foreground, background or closed, got \"\(startText)\"")
        }
        settings.startState = start
        settings.charging = options.has("charging")
        settings.timeScale = process.timeScale
        var configuration = DeviceConfiguration(
            identity: identity, settings: settings, databasePath: try options.require("db"),
            serverEndpoint: try options.require("server"), brokerEndpoint: options.string("broker"),
            controlEndpoint: process.control, eventsPath: process.events, name: process.name,
            clock: SimClock(epochMicros: process.epochMicros ?? SimClock.wallMicros(), scale: settings.timeScale),
            seed: process.seed, synchronous: settings.synchronous, keys: keys)
        configuration.crashAt = process.crashAt.filter { $0.device == nil || $0.device == identity.device }
        return configuration
    }
}
