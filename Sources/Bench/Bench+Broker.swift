import Foundation
import LabControl
import LabKit
import Launcher
import SyncProtocol
import ZeroMQ

/// The broker's section: 20 registered devices of one account, every hint of 25,000 notices counted, beside a raw
/// ZeroMQ fan-out of as many messages (`synclab bench --broker` runs it alone).
extension Bench {
    mutating func measureBroker() throws {
        let folder = "\(out)/broker"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let peers = 20
        // Enough notices that both sides run for seconds, not a fraction of one (the same count of messages each).
        let notices = quick ? 500 : 25_000
        // Half a million hints make a file of ~200 MB of events: written as in a run, then not kept.
        defer { try? FileManager.default.removeItem(atPath: "\(folder)/events.jsonl") }
        let devices = (0..<peers).map { #"{"id":"p\#($0)","platform":"android","token":"t-\#($0)"}"# }
        try #"{"accounts":[{"id":"bench","devices":[\#(devices.joined(separator: ","))]}]}"#
            .write(toFile: "\(folder)/accounts.json", atomically: true, encoding: .utf8)
        let listen = "ipc://\(folder)/broker.sock"
        let noticesEndpoint = "ipc://\(folder)/notices.sock"
        let broker = RoleProcess(name: "broker", executable: "\(bin)/synclab-broker",
                                  arguments: ["--listen", listen, "--notices", noticesEndpoint,
                                              "--accounts", "\(folder)/accounts.json",
                                              "--control", "ipc://\(folder)/control.sock",
                                              // As in every lab run: each event is written to its file.
                                              "--events", "\(folder)/events.jsonl"],
                                  logPath: "\(folder)/broker.log")
        try broker.start()
        defer { broker.signal(SIGTERM); if !broker.wait(timeout: 5) { broker.killNow() } }
        let context = try Context()
        let control = try ControlClient(context: context, name: "broker", endpoint: "ipc://\(folder)/control.sock")
        try control.waitReady(timeout: 20, alive: { !broker.poll() })
        var sockets: [Socket] = []
        for i in 0..<peers {
            let dealer = try Socket(context, .dealer)
            try dealer.setReceiveHighWaterMark(0)
            try dealer.connect(listen)
            try dealer.send(Codec.encode(.register(Register(device: "p\(i)", account: "bench", platform: .android,
                                                            token: "t-\(i)"))))
            guard let reply = try dealer.receive(), case .registered = try Codec.decode(reply) else {
                throw LabError.io("bench: broker refused a registration")
            }
            try dealer.send(Codec.encode(.deviceState(DeviceState(device: "p\(i)", online: true, app: .foreground))))
            sockets.append(dealer)
        }
        let push = try Socket(context, .push)
        try push.setSendHighWaterMark(0)
        try push.connect(noticesEndpoint)
        usleep(200_000)  // let the registrations' device states land before the clock starts
        let expected = notices * peers
        var received = 0
        var poller = Poller(sockets)
        let start = SimClock.monotonicNanos()
        var sent = 0
        let deadline = Date().addingTimeInterval(60)
        while received < expected && Date() < deadline {
            // Keep a bounded number of notices ahead of the hints, so both sides run together.
            while sent < notices && sent * peers - received < 2_000 * peers / 10 + peers {
                sent += 1
                try push.send(Codec.encode(.notice(Notice(account: "bench", head: sent, origin: "origin",
                                                          changes: [ChangeRef(seq: sent, draft: "d", version: sent)]))))
            }
            let ready = try poller.poll(timeoutMs: 100)
            for index in ready {
                while try sockets[index].receive(dontWait: true) != nil { received += 1 }
            }
        }
        let seconds = Double(SimClock.monotonicNanos() - start) / 1e9
        record("broker.hintsPerSec", Double(received) / seconds)
        record("broker.rawFanoutPerSec",
            try Floors.rawFanoutPerSecond(endpoint: "ipc://\(folder)/raw.sock", peers: peers,
                                                                       messages: expected))
    }

    /// The broker's row of the table: hints/s, the raw fan-out beside it, and the target (≥ 0.5× raw).
    var brokerRow: (String, String, String, String) {
        let hints = value("broker.hintsPerSec"), raw = value("broker.rawFanoutPerSec")
        let ratio = hints / raw
        return ("broker hints delivered/s", String(format: "%.0f", hints),
                String(format: "%.2f× raw fan-out %.0f/s", ratio, raw),
                ratio >= 0.5 ? "met" : String(format: "MISSED (≥ 0.5× raw: %.2f×)", ratio))
    }

    /// The broker's row alone (`synclab bench --broker`).
    var brokerTable: String {
        let row = brokerRow
        return [row.0, row.1, row.2, row.3].joined(separator: "  ") + "\n"
    }
}
