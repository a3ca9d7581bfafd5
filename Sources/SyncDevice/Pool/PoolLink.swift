import LabKit
import SyncProtocol
import ZeroMQ

/// A pool's one connection to the broker or to the server (docs/PROTOCOL.md §13, §14), in place of a
/// DEALER per pooled device: a DEALER with the pool's own CURVE key, which the other side admits as the pool and which
/// may speak only for the devices the accounts file lists under the pool. Every message carries its device:
/// `[device, header, body]` both ways. Only with CURVE: under NULL nothing would bind the envelope to a key, so each
/// device keeps its own sockets.
final class PoolLink {
    let socket: Socket
    /// Messages that named a device this pool does not host (the other side never sends one), and bundles that
    /// could not be read: dropped, counted.
    private(set) var strays = 0
    /// With `bundlesPulls`: the pulls the devices made since the last `flush`, sent together then (docs/PROTOCOL.md
    /// §15).
    private var held: [MessageBundle.Entry] = []
    /// Pulls held and then refused by libzmq at `flush` (the socket at its high-water mark): their passes wait out
    /// their reply timeout, as for a pull lost on the way.
    private(set) var lostPulls = 0
    /// Bundles sent and the pulls they carried (a pull alone goes as its own message and is not counted).
    private(set) var bundlesSent = 0
    private(set) var pullsBundled = 0
    /// Bundles received and the entries read from them.
    private(set) var bundlesReceived = 0
    private(set) var entriesReceived = 0
    /// Pulls held before they go without waiting for the turn's end, so the server works on the first ones while
    /// the pool is still making the rest. Eight pay libzmq's and CURVE's cost per message once for eight pulls and
    /// kept the bench's pooled p50 (bundles of a whole turn cost it 20–30 %: docs/PERFORMANCE.md, "bundled pulls").
    static let bundleEntries = 8
    /// Whether pulls wait for `flush` (the server link) or go at once.
    let bundlesPulls: Bool
    /// Runs before anything leaves on the socket: the pool writes its devices' pending events (they go before the
    /// messages they describe).
    var beforeSend: () -> Void = {}
    /// The most entries a bundle from the other side may hold: one per device this pool hosts.
    let maxBundleEntries: Int
    /// The one header a bundle from the other side may carry (the broker's: hints, docs/PROTOCOL.md §16); nil: any.
    let bundledHeader: [UInt8]?

    init(_ context: Context, endpoint: String, own: CurveKeyPair, serverKey: String, devices: Int,
         bundlesPulls: Bool = false, bundledHeader: [UInt8]? = nil) throws {
        self.bundlesPulls = bundlesPulls
        self.bundledHeader = bundledHeader
        maxBundleEntries = max(devices, 1)
        socket = try Socket(context, .dealer)
        try socket.setMaxMessageSize(Socket.maxMessageBytes)
        try socket.setReconnectInterval(ms: 50)
        // One pipe carries every device's messages: room for as many as a thousand per device had.
        try socket.setReceiveHighWaterMark(Int32(clamping: 1_000 * max(devices, 1)))
        try socket.setSendHighWaterMark(Int32(clamping: 1_000 * max(devices, 1)))
        try socket.setCurveClient(own, serverKey: serverKey)
        try socket.connect(endpoint)
    }

    /// Sends one device's message under its envelope; nil when libzmq took it (or, a pull, when it is held for
    /// `flush`), otherwise why not. Anything but a pull sends what is held first, so the messages keep their order.
    func send(_ frames: [Frame], for device: [UInt8]) -> String? {
        if bundlesPulls && frames.count == 2 && frames[0] == MessageBundle.pullHeader {
            held.append(MessageBundle.Entry(device: device, header: frames[0], body: frames[1]))
            if held.count >= Self.bundleEntries { flush() }
            return nil
        }
        flush()
        return send([device] + frames)
    }

    /// Sends the pulls held since the last flush: one alone as its own message, more as bundles.
    func flush() {
        guard !held.isEmpty else { return }
        defer { held.removeAll(keepingCapacity: true) }
        for message in MessageBundle.messages(held, maxBytes: Int(Socket.maxMessageBytes)) {
            if send(message.frames) != nil {
                lostPulls += message.entries
            } else if held.count > 1 {
                bundlesSent += 1
                pullsBundled += message.entries
            }
        }
    }

    private func send(_ frames: [Frame]) -> String? {
        beforeSend()
        do {
            return try socket.send(frames, dontWait: true) ? nil : "would block"
        } catch {
            return "\(error)"
        }
    }

    /// Reads everything waiting and hands each message's frames (envelope removed) to its device's `deliver`;
    /// returns the devices that got something.
    func drain(_ deliver: (String, [Frame]) -> Bool) throws -> Set<String> {
        var touched: Set<String> = []
        while let frames = try socket.receive(dontWait: true) {
            if MessageBundle.isBundle(frames) {
                guard let entries = try? MessageBundle.decode(frames[2], maxEntries: maxBundleEntries,
                                                              only: bundledHeader) else {
                    strays += 1
                    continue
                }
                bundlesReceived += 1
                entriesReceived += entries.count
                for entry in entries {
                    guard let device = String(validating: entry.device, as: UTF8.self),
                          deliver(device, [entry.header, entry.body])
                    else {
                        strays += 1
                        continue
                    }
                    touched.insert(device)
                }
                continue
            }
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

    /// The server link's counts for the pool's `process.stopped` (`pulls`).
    var counters: JSONValue {
        .object([("bundles", .int(bundlesSent)), ("bundled", .int(pullsBundled)), ("lost", .int(lostPulls)),
                 ("strays", .int(strays))])
    }

    /// The broker link's counts for the pool's `process.stopped` (`hintLink`): bundles of hints received, the hints
    /// in them, and strays.
    var receivedCounters: JSONValue {
        .object([("bundles", .int(bundlesReceived)), ("bundled", .int(entriesReceived)), ("strays", .int(strays))])
    }

    func close() { socket.close() }
}
