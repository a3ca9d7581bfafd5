/// Byte tests on eight bytes of JSON text at once.
enum JSONBytes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// False when none of the eight bytes in `word` is a quote, a backslash, a control character (below 0x20) or
    /// a non-ASCII byte (0x80 or above); true when one may be (a true answer can be wrong, a false one never is).
    @inline(__always)
    static func mayNeedAttention(_ word: UInt64) -> Bool {
        // A byte of `x` is zero exactly when the byte of `word` equals the one compared with; subtracting one from
        // each byte sets the high bit of a zero byte (and, after a borrow, of some bytes above it).
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let found = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- ones &* 0x20) | word
        return found & highs != 0
    }
}
