import Foundation
import LabTestSupport
import SyncProtocol
import Testing
import ZeroMQ

/// A device with a valid key of its own account cannot stop a role by making a ROUTER's routing ids collide.
///
/// libzmq 4.3.4's ROUTER gives a peer that presents no routing id the next `0x00 + counter` id without checking that
/// no peer chose it, and aborts the process when one did (`zmq_assert` in `routing_socket_base_t::add_out_pipe`).
/// The attack: learn the counter (here from the role's log, the best possible guess: a local user could read it
/// while run files were world-readable, and libzmq never seeds `rand()`, so the counter's start was the same in every
/// process), connect sockets that choose the next ids, then connect anonymously. Without the cure both the server
/// and the broker die by SIGABRT at the first anonymous connection; with it every connection's routing id comes
/// from the ZAP handler, so the squatters' choice is ignored and nothing is ever generated.
@Suite struct TenantCrashTests {
    enum Target: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case server, broker
        var testDescription: String { rawValue }
    }

    @Test(arguments: Target.allCases)
    func squattingTheNextRoutingIDsCannotCrashARole(_ target: Target) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let events = target == .server ? lab.serverEvents : lab.brokerEvents
            let connect = { (id: [UInt8]?) throws -> TestClient in
                target == .server ? try lab.serverClient(as: "laptop", routingID: id)
                    : try lab.brokerClient(as: "laptop", routingID: id)
            }
            // The attacker's own anonymous connection: the role logs the id it goes by.
            try Self.poke(try connect(nil), lab: lab, events: events)
            guard let logged = Self.loggedPeers(lab, events).last, let counter = Self.counter(of: logged) else {
                Issue.record("no refusal logged for the attacker's connection: \(lab.log(target.rawValue))")
                return
            }
            var squatters: [TestClient] = []
            let squatted = (1...8).map { Self.automaticRoutingID(counter &+ UInt32($0)) }
            for id in squatted {
                let squatter = try connect(id)
                try Self.poke(squatter, lab: lab, events: events)
                squatters.append(squatter)
            }
            let peers = Set(Self.loggedPeers(lab, events))
            for id in squatted {
                #expect(!peers.contains(Self.label(id, target)), "a squatter goes by the id it chose")
            }
            // The anonymous connections libzmq would give the squatted ids.
            for _ in 0..<8 where lab.serverAlive && lab.brokerAlive {
                try Self.poke(try connect(nil), lab: lab, events: events)
            }
            let process = target == .server ? lab.server! : lab.broker!
            #expect(process.wait(timeout: 0) == nil,
                    "the \(target) \(process.termination.map { "\($0)" } ?? "")")
            guard lab.serverAlive && lab.brokerAlive else { return }
            // Every other account keeps syncing: iphone registers for hints, pixel pushes and pulls.
            let iphone = try lab.registered("iphone")
            let pixel = try lab.helloed("pixel")
            guard case .pushResult? = try pixel.push([SecureLab.op("pixel-after")]), case .page? = try pixel.pull()
            else {
                Issue.record("acme's device is not served after the attack")
                return
            }
            #expect(lab.eventually { lab.hintsAccepted > 0 }, "no hint for acme's push after the attack")
            withExtendedLifetime((squatters, iphone)) {}
        }
    }

    /// A frame the role refuses and logs with the connection's id; waits (bounded) for the answer or the line.
    static func poke(_ client: TestClient, lab: SecureLab, events: String) throws {
        let before = loggedPeers(lab, events).count
        try client.sendRaw([Array("SL1 bogus".utf8), Array("{}".utf8)])
        _ = try client.receive(timeoutMs: 5_000)
        _ = lab.eventually(timeout: 5) {
            loggedPeers(lab, events).count > before || !lab.serverAlive || !lab.brokerAlive
        }
    }

    /// The `peer` of every `request.refused` line, in order.
    static func loggedPeers(_ lab: SecureLab, _ events: String) -> [String] {
        lab.events(events, type: "request.refused").compactMap { $0["peer"]?.stringValue }
    }

    /// The last four bytes of a logged hex id: libzmq's counter when the id is one it generated.
    static func counter(of label: String) -> UInt32? {
        let digits = label.hasPrefix("0x") ? label.dropFirst(2) : Substring(label)
        guard digits.count >= 8, digits.allSatisfy(\.isHexDigit) else { return nil }
        return UInt32(digits.suffix(8), radix: 16)
    }

    /// How `target` logs a (non-printable) routing id: the server in bare hex, the broker with `0x`.
    static func label(_ id: [UInt8], _ target: Target) -> String {
        let hex = id.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return target == .server ? hex : "0x" + hex
    }

    /// libzmq's automatic routing id for `counter`: 0x00 and the counter's four bytes.
    static func automaticRoutingID(_ counter: UInt32) -> [UInt8] {
        [0, UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
    }
}
