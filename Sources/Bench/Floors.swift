import Foundation
import LabKit
import Launcher
import SQLite
import Synchronization
import ZeroMQ

/// The machine's own floor, measured in the same run as the lab's figures: what one zmq round trip and one SQLite
/// WAL commit cost here, and a raw ROUTER fan-out to compare the broker with.
enum Floors {
    /// One way of making a round trip, measured: the median µs a round trip took, and the CPU µs the whole process
    /// spent per round trip (every thread's, libzmq's IO threads and the sleeps' wake-ups included).
    struct RoundTrip {
        let micros: Double, cpuMicros: Double
    }

    /// A DEALER → ROUTER → DEALER round trip of a small message between two threads. With `idleMicros` the sender
    /// sleeps that long before each message, so every round trip starts from idle threads, as an edit does in the
    /// propagation runs (one every 10 ms): the machine's wake-up cost, beside the hot figure. With `curve`, both
    /// ends speak CURVE (no ZAP handler: libzmq's own cost of the mechanism, nothing of the lab's).
    static func zmqRoundTrip(endpoint: String, count: Int, idleMicros: UInt32 = 0, curve: Bool = false) throws
        -> RoundTrip
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
        let measured = try timed(count: count, warmUp: 200, idleMicros: idleMicros) {
            try dealer.send([payload])
            _ = try dealer.receive()
        }
        try dealer.send([[0x71]])
        _ = try dealer.receive()
        while echo.isExecuting { usleep(1000) }
        return measured
    }

    /// Runs `roundTrip` `warmUp` times, then `count` times measured (each after `idleMicros` asleep, if any): the
    /// median µs of one, and the process's CPU µs per measured one.
    static func timed(count: Int, warmUp: Int, idleMicros: UInt32, _ roundTrip: () throws -> Void) rethrows
        -> RoundTrip
    {
        for _ in 0..<warmUp { try roundTrip() }
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let cpuStart = processCPUMicros()
        for _ in 0..<count {
            if idleMicros > 0 { usleep(idleMicros) }
            let start = SimClock.monotonicNanos()
            try roundTrip()
            samples.append(Double(SimClock.monotonicNanos() - start) / 1000)
        }
        return RoundTrip(micros: median(samples) ?? 0, cpuMicros: (processCPUMicros() - cpuStart) / Double(count))
    }

    /// The same round trip over a plain Unix stream socket pair (one `write` and one blocking `read` each way, no
    /// libzmq): each one-way hop wakes one thread, where a ZeroMQ hop between processes wakes three (the sender's
    /// IO thread, the receiver's IO thread, the receiver's own). What a peer's hop from idle costs on this machine.
    static func socketRoundTrip(count: Int, idleMicros: UInt32) throws -> RoundTrip {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw LabError.io("bench: socketpair failed (errno \(errno))")
        }
        let (near, far) = (pair[0], pair[1])
        defer { close(near); close(far) }
        let echo = Thread {
            var byte: UInt8 = 0
            while read(far, &byte, 1) == 1 && byte != 0x71 { _ = write(far, &byte, 1) }
        }
        echo.start()
        var byte: UInt8 = 0x68
        let measured = try timed(count: count, warmUp: 50, idleMicros: idleMicros) {
            guard write(near, &byte, 1) == 1, read(near, &byte, 1) == 1 else {
                throw LabError.io("bench: the socket pair's echo stopped (errno \(errno))")
            }
        }
        var quit: UInt8 = 0x71
        _ = write(near, &quit, 1)
        while echo.isExecuting { usleep(1000) }
        return measured
    }

    /// The CPU µs this process has spent so far, user and system, all threads.
    static func processCPUMicros() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
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
