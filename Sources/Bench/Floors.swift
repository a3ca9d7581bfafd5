import Foundation
import LabKit
import Launcher
import SQLite
import Synchronization
import ZeroMQ

/// The machine's own floor, measured in the same run as the lab's figures: what one zmq round trip and one SQLite
/// WAL commit cost here, and a raw ROUTER fan-out to compare the broker with.
enum Floors {
    /// Median µs of a DEALER → ROUTER → DEALER round trip of a small message between two threads. With `idleMicros`
    /// the sender sleeps that long before each message, so every round trip starts from idle threads, as an edit
    /// does in the propagation runs (one every 10 ms): the machine's wake-up cost, beside the hot figure.
    /// With `curve`, both ends speak CURVE (no ZAP handler: libzmq's own cost of the mechanism, nothing of the lab's).
    static func zmqRoundTripMicros(endpoint: String, count: Int, idleMicros: UInt32 = 0, curve: Bool = false) throws
        -> Double
    {
        let context = try Context()
        let router = try Socket(context, .router)
        let serverPair = try CurveKeyPair.generate()
        if curve { try router.setCurveServer(serverPair, domain: "floor") }
        try router.bind(endpoint)
        let bound = router.lastEndpoint
        let echo = Thread {
            var poller = Poller([router])
            while true {
                guard let ready = try? poller.poll(timeoutMs: 100) else { return }
                if ready.isEmpty { continue }
                guard let frames = try? router.receive(dontWait: true) else { return }
                if frames.count == 2 && frames[1] == [0x71] { _ = try? router.send(frames); return }
                _ = try? router.send(frames)
            }
        }
        echo.start()
        let dealer = try Socket(context, .dealer)
        if curve { try dealer.setCurveClient(try CurveKeyPair.generate(), serverKey: serverPair.publicKey) }
        try dealer.connect(bound)
        let payload = Array("SL1 hint".utf8)
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for i in 0..<(count + 200) {
            if idleMicros > 0 && i >= 200 { usleep(idleMicros) }
            let start = SimClock.monotonicNanos()
            try dealer.send([payload])
            _ = try dealer.receive()
            if i >= 200 { samples.append(Double(SimClock.monotonicNanos() - start) / 1000) }
        }
        try dealer.send([[0x71]])
        _ = try dealer.receive()
        while echo.isExecuting { usleep(1000) }
        return median(samples) ?? 0
    }

    /// Median µs of one small INSERT committed in its own transaction, WAL, with `synchronous` (the lab's processes
    /// run `normal` unless a topology says `full`).
    static func sqliteCommitMicros(folder: String, count: Int, synchronous: Synchronous) throws -> Double {
        let path = "\(folder)/floor-\(synchronous.rawValue.lowercased()).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let db = try Database(path: path, synchronous: synchronous)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, key TEXT, body TEXT)")
        var samples: [Double] = []
        for i in 0..<(count + 100) {
            let start = SimClock.monotonicNanos()
            _ = try db.transaction { try db.run("INSERT INTO t(key, body) VALUES (?, ?)", "k\(i)",
                "a small draft body") }
            if i >= 100 { samples.append(Double(SimClock.monotonicNanos() - start) / 1000) }
        }
        return median(samples) ?? 0
    }

    /// Messages per second a bare ROUTER sends to `peers` DEALERs (each message to one peer, round robin), all
    /// received: what the broker's delivery leg could do with no decisions at all.
    static func rawFanoutPerSecond(endpoint: String, peers: Int, messages: Int) throws -> Double {
        let context = try Context()
        let router = try Socket(context, .router)
        try router.setRouterMandatory(true)
        try router.setSendHighWaterMark(0)
        try router.bind(endpoint)
        let bound = router.lastEndpoint
        var made: [Socket] = []
        for i in 0..<peers {
            let dealer = try Socket(context, .dealer)
            try dealer.setRoutingID(Array("peer-\(i)".utf8))
            try dealer.setReceiveHighWaterMark(0)
            try dealer.connect(bound)
            try dealer.send([Array("hello".utf8)])
            made.append(dealer)
        }
        let dealers = made
        var seen = 0
        var poller = Poller([router])
        while seen < peers {
            _ = try poller.poll(timeoutMs: 1000)
            while try router.receive(dontWait: true) != nil { seen += 1 }
        }
        let body = Array(#"{"hint":"h-1","account":"acme","head":42}"#.utf8)
        let header = Array("SL1 hint".utf8)
        let ids = (0..<peers).map { Array("peer-\($0)".utf8) }
        let received = Counter()
        let readers = Thread {
            var poller = Poller(dealers)
            while received.value < messages {
                guard let ready = try? poller.poll(timeoutMs: 200) else { return }
                for index in ready {
                    while (try? dealers[index].receive(dontWait: true))
                        ?? nil != nil { received.value = received.value + 1 }
                }
            }
        }
        let start = SimClock.monotonicNanos()
        readers.start()
        for i in 0..<messages {
            try router.send([ids[i % peers], header, body])
        }
        let deadline = Date().addingTimeInterval(30)
        while received.value < messages && Date() < deadline { usleep(200) }
        let seconds = Double(SimClock.monotonicNanos() - start) / 1e9
        return Double(received.value) / seconds
    }
}

/// A count written by one thread and read by another.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    var value: Int {
        get { atomic.load(ordering: .acquiring) }
        set { atomic.store(newValue, ordering: .releasing) }
    }
}
