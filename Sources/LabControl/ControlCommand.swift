import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// `synclab-device control --to ENDPOINT COMMAND [JSON-ARGS]`: sends one control command to any lab process (a
/// device, the server, the broker) with the lab's `ControlClient` and prints the answer, so a person can drive a lab
/// by hand.
public enum ControlCommand {
    public static let spec = CommandSpec(
        name: "synclab-device control", summary: "send one control command to a running lab process and print its "
            + "answer",
        usage: "synclab-device control --to ENDPOINT [--key-file PATH --server-key-file PATH] COMMAND [JSON-ARGS]",
        flags: [
            Flag("to", value: "ENDPOINT", help: "the process's --control endpoint (required)"),
            Flag("timeout-ms", value: "MS", default: String(ControlClient.defaultTimeoutMs),
                 help: "how long to wait for the answer"),
            Flag("key-file", value: "PATH",
                 help: "CURVE: the secret key file of the client (the launcher's key, the only one admitted)"),
            Flag("server-key-file", value: "PATH", help: "CURVE: the target process's public key file"),
        ],
        footer: """
            Examples:
              synclab-device control --to tcp://127.0.0.1:7101 edit '{"draft":"d1","action":"create","title":"Hi"}'
              synclab-device control --to tcp://127.0.0.1:7102 status
            A process started with --key-file (CURVE) admits only the launcher's key on control:
              synclab-device control --to tcp://127.0.0.1:7102 --key-file keys/launcher.secret \\
                  --server-key-file keys/pixel.public status
            Exit status: 0 acknowledged, 1 refused or no answer, 2 usage error.
            """
    )

    /// Runs the subcommand; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        let options = spec.parseOrExit(arguments)
        guard let endpoint = options.string("to"), let command = options.positional.first,
              options.positional.count <= 2
        else {
            Output.stderr("synclab-device control: need --to ENDPOINT and a COMMAND (see --help)\n")
            return 2
        }
        var args: [String: JSONValue] = [:]
        if options.positional.count == 2 {
            guard let parsed = try? JSONValue.parse(options.positional[1]), let pairs = parsed.objectValue else {
                Output.stderr("synclab-device control: JSON-ARGS must be a JSON object, got \(options.positional[1])\n")
                return 2
            }
            for (key, value) in pairs { args[key] = value }
        }
        let timeoutMs: Int
        do {
            timeoutMs = try options.int("timeout-ms") ?? ControlClient.defaultTimeoutMs
        } catch {
            Output.stderr("synclab-device control: \(error)\n")
            return 2
        }
        do {
            var curve: (CurveKeyPair, String)?
            if let keyFile = options.string("key-file") {
                guard let serverKeyFile = options.string("server-key-file") else {
                    Output.stderr("synclab-device control: --key-file needs --server-key-file\n")
                    return 2
                }
                curve = (try CurveKeyPair.read(secretFile: keyFile), try CurveKeyPair.read(publicFile: serverKeyFile))
            }
            let client = try ControlClient(context: try Context(), endpoint: endpoint, curve: curve)
            switch try client.request(command, args, timeoutMs: timeoutMs) {
            case .ack(let ack):
                Output.stdout((ack.data ?? .object([("detail", .string(ack.detail))])).description + "\n")
                if !ack.ok { Output.stderr("refused: \(ack.detail)\n") }
                return ack.ok ? 0 : 1
            case .error(let error):
                Output.stderr("refused: \(error.code.rawValue): \(error.message)\n")
                return 1
            case .unsent:
                Output.stderr("synclab-device control: nobody listens at \(endpoint)\n")
                return 1
            case .unanswered, .exited:
                Output.stderr("synclab-device control: no answer from \(endpoint) within \(timeoutMs) ms\n")
                return 1
            }
        } catch {
            Output.stderr("synclab-device control: \(error)\n")
            return 1
        }
    }
}
