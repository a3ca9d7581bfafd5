import LabKit

/// The simulated links between processes: each named link (`pixel>server`, `server>pixel`, `server>broker`, …) has
/// its own seeded latency stream and delivers in the order it was given messages, as a ZeroMQ connection does.
/// Latencies are virtual µs of the machinery's real time (a hop on the lab's ipc sockets), which the run's time
/// scale turns into simulated seconds exactly as it does for real processes.
public struct SimNetwork {
    /// The fixed part of one hop, µs.
    public var baseMicros: Double
    /// The mean of the exponential part of one hop, µs.
    public var jitterMeanMicros: Double
    let seed: UInt64
    private var generators: [String: SeededGenerator] = [:]
    private var lastArrival: [String: Int64] = [:]

    public init(seed: UInt64, baseMicros: Double = 120, jitterMeanMicros: Double = 80) {
        self.seed = seed
        self.baseMicros = baseMicros
        self.jitterMeanMicros = jitterMeanMicros
    }

    /// When a message put on `link` at `now` arrives: a fresh latency draw, never before the link's previous
    /// message (a connection does not reorder).
    public mutating func arrival(on link: String, now: Int64) -> Int64 {
        var generator = generators[link] ?? SeededGenerator.derived(seed: seed, name: "net/\(link)")
        let latency = Int64((baseMicros + generator.exponential(mean: jitterMeanMicros)).rounded())
        generators[link] = generator
        let time = max(now + max(1, latency), lastArrival[link] ?? Int64.min)
        lastArrival[link] = time
        return time
    }
}
