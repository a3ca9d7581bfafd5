import LabKit
import SyncProtocol

extension BrokerInstance {
    /// A control command, decided (`BrokerControl`).
    mutating func onControl(_ control: Control, peer: [UInt8], now: Double) -> [BrokerDirective] {
        var out: [BrokerDirective] = []
        var ack = ControlAck(req: control.req, ok: true)
        var stop = false
        switch BrokerControl.parse(control) {
        case .ping?:
            ack.detail = "pong"
        case .stop?:
            ack.detail = "stopping"
            stop = true
        case .stats?:
            ack.detail = counters.balances ? "hints balance" : "hints do not balance"
            ack.data = stats
        case .chaos(let args)?:
            do {
                out += try onChaos(ChaosChange.parse(args))
                ack.detail = "chaos set"
                ack.data = .object([("global", .object(chaos.fields))] + chaosByDevice.keys.sorted().map {
                    ($0, .object(chaosByDevice[$0]!.fields))
                })
            } catch {
                ack.ok = false
                ack.detail = "chaos: \(error)"
            }
        case .crashAt?:
            return [.armCrash(control, peer: peer)]
        case nil:
            ack.ok = false
            ack.detail = "unknown command \"\(control.command)\"; the broker answers ping, stop, stats, chaos"
        }
        out += answered(control, ack, peer: peer)
        if stop { out.append(.stop) }
        return out
    }

    /// The driver armed (or disarmed) the crash point `crashAt` named (`ok`), or could not: `detail` says what it
    /// did, or what was wrong.
    public func onCrashArmed(ok: Bool, detail: String, control: Control, peer: [UInt8]) -> [BrokerDirective] {
        let ack = ControlAck(req: control.req, ok: ok, detail: detail)
        return (ok ? [.log(EventLine(.crashArmed, [("detail", .string(detail))]))] : [])
            + answered(control, ack, peer: peer)
    }

    /// `control.received` and the acknowledgement.
    func answered(_ control: Control, _ ack: ControlAck, peer: [UInt8]) -> [BrokerDirective] {
        let args = control.args.keys.sorted().map { ($0, control.args[$0]!) }
        return [
            .log(EventLine(.controlReceived, [
                ("command", .string(control.command)), ("args", .object(args)), ("ok", .bool(ack.ok)),
                ("detail", .string(ack.detail)),
            ])),
            .reply(socket: .control, peer: peer, message: .controlAck(ack)),
        ]
    }
}
