import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// The pool's one control ROUTER. A `control` whose args carry `device` goes to that device, with `device` taken
/// out, and is answered by it exactly as its own process would answer; without `device` it is for the pool:
/// `ping`, `stop`, `statusAll`, `syncAll`. Anything else is answered `ok: false` or `error`, and the pool keeps
/// serving.
extension DevicePool {
    func onControlSocket(_ socket: Socket) throws {
        while !stopping, let frames = try socket.receive(dontWait: true) {
            onControlFrames(frames)
        }
    }

    func onControlFrames(_ frames: [[UInt8]]) {
        guard let peer = frames.first, frames.count >= 2 else { return }
        let request: Control
        switch Codec.decodeOrReply(Array(frames.dropFirst())) {
        case .success(.control(let decoded)):
            request = decoded
        case .success(let other):
            refuse(peer, ProtocolError.unexpected(type: other.type, receiver: "a device pool's control socket"))
            return
        case .failure(let error):
            refuse(peer, error)
            return
        }
        if let target = request.args["device"] {
            guard let id = target.stringValue else {
                answer(peer, request, ok: false, detail: "\"device\" must be a device id string")
                return
            }
            guard let shell = shells[id] else {
                let known = order.contains(id) ? "has stopped" : "is not in this pool"
                answer(peer, request, ok: false, detail: "device \"\(id)\" \(known)")
                return
            }
            var args = request.args
            args.removeValue(forKey: "device")
            shell.driver.handle(Control(req: request.req, command: request.command, args: args), from: peer)
            return
        }
        onPoolCommand(request, from: peer)
    }

    func onPoolCommand(_ request: Control, from peer: [UInt8]) {
        switch request.command {
        case "ping":
            answer(peer, request, ok: true, detail: "pong", data: .object([("devices", .int(shells.count))]))
        case "stop":
            stopping = true
            answer(peer, request, ok: true, detail: "stopping")
        case "statusAll":
            let devices = order.compactMap { id in shells[id].map { (id, $0.driver.statusData()) } }
            let full = request.args["full"]?.boolValue ?? false
            answer(peer, request, ok: true, detail: "\(devices.count) devices",
                   data: .object([("devices",
                       .object(devices.map { ($0.0, full ? $0.1 : SyncGather.compact($0.1)) }))]))
        case "syncAll":
            startSyncAll(request, from: peer)
        default:
            answer(peer, request, ok: false, detail: "unknown pool command \"\(request.command)\"; a pool knows ping, "
                + "stop, statusAll, syncAll; a command for one device carries args.device")
        }
    }

    /// A forced (or not) pass on every live device at once; answered when all have ended (`SyncGather`).
    func startSyncAll(_ request: Control, from peer: [UInt8]) {
        let forceArg = request.args["force"]
        let timeoutArg = request.args["timeoutMs"]
        guard forceArg == nil || forceArg?.boolValue != nil else {
            answer(peer, request, ok: false, detail: "syncAll: \"force\" must be true or false")
            return
        }
        guard timeoutArg == nil || (timeoutArg?.intValue ?? 0) > 0 else {
            answer(peer, request, ok: false, detail: "syncAll: \"timeoutMs\" must be a whole number above 0")
            return
        }
        let timeoutMs = UInt64(timeoutArg?.intValue ?? 30_000)
        let id = nextGather
        nextGather += 1
        let live = order.filter { shells[$0] != nil }
        gathers[id] = SyncGather(peer: peer, req: request.req,
                                 deadline: SimClock.monotonicNanos() + timeoutMs * 1_000_000,
                                 full: request.args["full"]?.boolValue ?? false, waiting: Set(live))
        logControl(request, ok: true, detail: "answered when \(live.count) passes end")
        for device in live {
            shells[device]?.driver.requestSync(force: forceArg?.boolValue ?? false,
                waiter: .pool { [weak self] status in
                self?.gathers[id]?.add(device, status)
                self?.answerFinishedGathers()
            })
        }
        answerFinishedGathers()
    }

    func answerFinishedGathers() {
        for (id, gather) in gathers where gather.isDone {
            gathers[id] = nil
            send(gather.peer, .controlAck(gather.ack(order: order)))
        }
    }

    func expireGathers() {
        guard !gathers.isEmpty else { return }
        let wall = SimClock.monotonicNanos()
        for (id, gather) in gathers where gather.isDone || gather.deadline <= wall {
            gathers[id] = nil
            send(gather.peer, .controlAck(gather.ack(order: order)))
        }
    }

    /// On stop: whoever waits is told what there is.
    func answerAllGathers() {
        for (_, gather) in gathers { send(gather.peer, .controlAck(gather.ack(order: order))) }
        gathers = [:]
    }

    func answer(_ peer: [UInt8], _ request: Control, ok: Bool, detail: String, data: JSONValue? = nil) {
        logControl(request, ok: ok, detail: detail)
        send(peer, .controlAck(ControlAck(req: request.req, ok: ok, detail: detail, data: data)))
    }

    func logControl(_ request: Control, ok: Bool, detail: String) {
        let args = JSONValue.object(request.args.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) })
        events.emit(.controlReceived, [("command", .string(request.command)), ("args", args), ("ok", .bool(ok)),
                                         ("detail", .string(detail))])
    }

    func refuse(_ peer: [UInt8], _ error: ProtocolError) {
        events.emit(.requestRefused, [("code", .string(error.code.rawValue)),
                                        ("message", .string(error.description)), ("peer", "control")])
        send(peer, .error(ErrorReply(code: error.code, message: error.description)))
    }

    func send(_ peer: [UInt8], _ message: Message) {
        guard let control else { return }
        events.flush()
        _ = try? control.send([peer] + Codec.encode(message), dontWait: true)
    }
}
