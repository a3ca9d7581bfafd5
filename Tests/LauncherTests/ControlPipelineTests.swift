import Foundation
import LabControl
import SyncProtocol
import Testing
import ZeroMQ

/// `ControlClient.pipeline` (the heal's commands, many in flight): each outcome lands at its own request's index
/// whatever order the answers come in, a refusal stays a refusal, and requests nobody answers end `unanswered`.
@Suite struct ControlPipelineTests {
    /// A ROUTER that answers every `control` in pairs, the second of each pair first; `bad` is refused and `mute`
    /// never answered.
    static func serve(_ endpoint: String, context: Context, count: Int) throws {
        let router = try Socket(context, .router)
        try router.bind(endpoint)
        defer { router.close() }
        var held: [[UInt8]]? = nil
        for _ in 0..<count {
            guard let frames = try router.receive(dontWait: false), frames.count >= 2,
                  case .success(.control(let control)) = Codec.decodeOrReply(Array(frames.dropFirst()))
            else { continue }
            if control.command == "mute" { continue }
            let message = [frames[0]] + Codec.encode(.controlAck(ControlAck(req: control.req,
                                                                            ok: control.command != "bad",
                                                                            detail: control.command)))
            if let first = held {
                _ = try router.send(message, dontWait: false)
                _ = try router.send(first, dontWait: false)
                held = nil
            } else {
                held = message
            }
        }
        if let first = held { _ = try router.send(first, dontWait: false) }
        usleep(300_000)  // the last answers leave before the socket closes
    }

    @Test func outcomesFollowTheRequestsNotTheAnswers() throws {
        let context = try Context()
        let endpoint = "ipc:///tmp/synclab-pipeline-\(UUID().uuidString).sock"
        let client = try ControlClient(context: context, endpoint: endpoint, liveOnly: false)
        let commands = ["a", "b", "bad", "c", "d", "mute", "e"]
        let count = commands.count
        let server = Thread { try? Self.serve(endpoint, context: context, count: count) }
        server.start()
        let outcomes = try client.pipeline(commands.map { ($0, [:]) }, window: 3, timeoutMs: 1_000)
        #expect(outcomes.count == commands.count)
        for (command, outcome) in zip(commands, outcomes) {
            switch outcome {
            case .ack(let ack):
                #expect(ack.detail == command, "the answer to \(command) landed at another request")
                #expect(ack.ok == (command != "bad"))
            case .unanswered:
                #expect(command == "mute")
            default:
                Issue.record("\(command): \(outcome)")
            }
        }
        #expect(client.failure(outcomes[5], command: "mute") != nil)
    }
}
