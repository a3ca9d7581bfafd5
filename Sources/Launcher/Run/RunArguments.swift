import LabKit
import PushBroker
import SyncDevice
import SyncServer

/// The command line of each process of a run, made from the settings tables (`ProcessFlags`, `ServerSettings.knobs`,
/// `BrokerSettings.knobs`, `DeviceSettings.knobs`): `LabRun` starts the processes with it and `SimRun` parses it into
/// the same configurations, so a real and a simulated run configure every process from one text. Only what differs
/// from a role's defaults is written.
struct RunArguments {
    let topology: Topology, folder: RunFolder
    /// The server's device ROUTER, the broker's notices socket and the broker's device ROUTER.
    let server, notices, broker: String
    /// Wall µs of the run's simulated time 0, and the run's CURVE keys (nil: NULL on every socket, as with
    /// `security: "none"` and in the simulation).
    let epochMicros: Int64, keys: RunKeys?

    /// The flags every process takes: its control socket, events file and name, the run's clock and seed, its keys.
    func common(_ name: String, control: String, events: String?) -> [String] {
        var process = ProcessFlags()
        process.control = control
        process.events = events
        process.name = name
        process.epochMicros = epochMicros
        process.timeScale = topology.timeScale
        process.seed = topology.seed
        process.keyFile = keys?.secretFile(name)
        process.launcherKeyFile = keys?.publicFile("launcher")
        return process.arguments
    }

    var serverArguments: [String] {
        ["--db", folder.path("server.sqlite"), "--listen", server, "--notify", notices, "--accounts",
            folder.accountsPath]
            + topology.server.flags() + (keys.map { ["--broker-key-file", $0.publicFile("broker")] } ?? [])
    }

    var brokerArguments: [String] {
        ["--listen", broker, "--notices", notices, "--accounts", folder.accountsPath] + topology.brokerSettings.flags()
            + (keys.map { ["--server-key-file", $0.publicFile("server")] } ?? [])
    }

    /// What every device process and every pool is given: its peers and the topology-wide device settings (a
    /// device's own values follow in its argv or its pool spec entry).
    var sharedDeviceArguments: [String] {
        ["--server", server, "--broker", broker] + topology.device.flags()
            + (keys.map { ["--server-key-file", $0.publicFile("server"), "--broker-key-file", $0.publicFile("broker")] }
                ?? [])
    }

    /// A device process: who it is (`token`: `--token T` or `--token-file PATH`), its file, its user, and the
    /// settings in which it differs from the topology-wide ones.
    func deviceArguments(_ device: DeviceSpec, account: String, token: [String]) -> [String] {
        ["--id", device.id, "--account", account] + token
            + ["--platform", device.platform.rawValue, "--db", folder.devicePath(device.id),
               "--engagement", device.engagement.flagText, "--start-state", device.start.rawValue]
            + (device.charging ? ["--charging"] : []) + sharedDeviceArguments
                + device.settings.flags(over: topology.device)
    }

    /// The device settings in which `device` differs from the topology-wide ones, as flag and text (a pool spec's
    /// `flags`).
    func ownFlags(_ device: DeviceSpec) -> [(flag: String, value: String)] {
        device.settings.changes(from: topology.device).map { ($0.knob.flag, $0.text) }
    }
}
