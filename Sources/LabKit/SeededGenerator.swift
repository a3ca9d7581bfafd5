import Foundation

/// A small, fast, seeded generator (SplitMix64): the same seed gives the same sequence on every machine.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        p > 0 && unit() < p
    }

    /// An exponential draw with the given mean.
    public mutating func exponential(mean: Double) -> Double {
        -mean * log1pNeg(unit())
    }

    private func log1pNeg(_ u: Double) -> Double {
        // log(1 - u) with u in [0, 1): never log(0).
        Foundation.log(max(1 - u, .leastNonzeroMagnitude))
    }

    /// A generator derived from this seed and a name, so each device or component gets its own stream.
    public static func derived(seed: UInt64, name: String) -> SeededGenerator {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01B3
        }
        return SeededGenerator(seed: seed ^ hash)
    }
}
