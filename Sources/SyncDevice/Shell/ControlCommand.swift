import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// `synclab-device control --to ENDPOINT COMMAND [JSON-ARGS]`: sends one control command to any lab process (a
/// device, the server, the broker) and prints the answer, so a person can drive a lab by hand.
public enum ControlCommand {
    public static let spec = CommandSpec(
        name: "synclab-device control",
        summary: "send one control command to a running lab process and print its answer",
        usage: "synclab-device control --to ENDPOINT [--key-file PATH --server-key-file PATH] COMMAND [JSON-ARGS]",
        flags: [
            Flag("to", value: "ENDPOINT", help: "the process's --control endpoint (required)"),
            Flag("key-file", value: "PATH",
                 help: "CURVE: the secret key file of the client (the launcher's key, the only one admitted)"),
            Flag("server-key-file", value: "PATH", help: "CURVE: the target process's public key file"),
            Flag("timeout-ms", value: "MS", default: "5000", help: "how long to wait for the answer"),
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
            timeoutMs = try options.int("timeout-ms") ?? 5_000
        } catch {
            Output.stderr("synclab-device control: \(error)\n")
            return 2
        }
        do {
            let context = try Context()
            let socket = try Socket(context, .dealer)
            try socket.setRandomRoutingID()
            defer { socket.close() }
            if let keyFile = options.string("key-file") {
                guard let serverKeyFile = options.string("server-key-file") else {
                    Output.stderr("synclab-device control: --key-file needs --server-key-file\n")
                    return 2
                }
                try socket.setCurveClient(try CurveKeyPair.read(secretFile: keyFile),
                                          serverKey: try CurveKeyPair.read(publicFile: serverKeyFile))
            }
            try socket.setImmediate(true)
            try socket.connect(endpoint)
            let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1_000)
            let request = Codec.encode(.control(Control(req: 1, command: command, args: args)))
            while try !socket.send(request, dontWait: true) {
                guard Date() < deadline else {
                    Output.stderr("synclab-device control: nobody listens at \(endpoint)\n")
                    return 1
                }
                usleep(5_000)
            }
            var poller = Poller([socket])
            while Date() < deadline {
                guard try !poller.poll(timeoutMs: 50).isEmpty else { continue }
                while let frames = try socket.receive(dontWait: true) {
                    switch Codec.decodeOrReply(frames) {
                    case .success(.controlAck(let ack)) where ack.req == 1:
                        Output.stdout((ack.data ?? .object([("detail", .string(ack.detail))])).description + "\n")
                        if !ack.ok { Output.stderr("refused: \(ack.detail)\n") }
                        return ack.ok ? 0 : 1
                    case .success(.error(let error)):
                        Output.stderr("refused: \(error.code.rawValue): \(error.message)\n")
                        return 1
                    default:
                        continue
                    }
                }
            }
            Output.stderr("synclab-device control: no answer from \(endpoint) within \(timeoutMs) ms\n")
            return 1
        } catch {
            Output.stderr("synclab-device control: \(error)\n")
            return 1
        }
    }
}
