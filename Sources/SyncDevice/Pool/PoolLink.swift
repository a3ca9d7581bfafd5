import LabKit
import ZeroMQ

/// A pool's one connection to the broker or to the server (docs/PROTOCOL.md §13, §14), in place of a
/// DEALER per pooled device: a DEALER with the pool's own CURVE key, which the other side admits as the pool and which
/// may speak only for the devices the accounts file lists under the pool. Every message carries its device:
/// `[device, header, body]` both ways. Only with CURVE: under NULL nothing would bind the envelope to a key, so each
/// device keeps its own sockets.
final class PoolLink {
    let socket: Socket
    /// Messages that named a device this pool does not host (the other side never sends one): dropped, counted.
    private(set) var strays = 0

    init(_ context: Context, endpoint: String, own: CurveKeyPair, serverKey: String, devices: Int) throws {
        socket = try Socket(context, .dealer)
        try socket.setMaxMessageSize(Socket.maxMessageBytes)
        try socket.setReconnectInterval(ms: 50)
        // One pipe carries every device's messages: room for as many as a thousand per device had.
        try socket.setReceiveHighWaterMark(Int32(clamping: 1_000 * max(devices, 1)))
        try socket.setSendHighWaterMark(Int32(clamping: 1_000 * max(devices, 1)))
        try socket.setCurveClient(own, serverKey: serverKey)
        try socket.connect(endpoint)
    }

    /// Sends one device's message under its envelope; nil when libzmq took it, otherwise why not.
    func send(_ frames: [Frame], for device: [UInt8]) -> String? {
        do {
            return try socket.send([device] + frames, dontWait: true) ? nil : "would block"
        } catch {
            return "\(error)"
        }
    }

    /// Reads everything waiting and hands each message's frames (envelope removed) to its device's `deliver`;
    /// returns the devices that got something.
    func drain(_ deliver: (String, [Frame]) -> Bool) throws -> Set<String> {
        var touched: Set<String> = []
        while let frames = try socket.receive(dontWait: true) {
            guard frames.count >= 2, let device = String(validating: frames[0], as: UTF8.self),
                  deliver(device, Array(frames.dropFirst()))
            else {
                strays += 1
                continue
            }
            touched.insert(device)
        }
        return touched
    }

    func close() { socket.close() }
}
