/// A hint's id, `h-<number>`, as `"h-\(number)"` spells it. Built from bytes on the stack instead of through string
/// interpolation (≈ 490 instructions a hint, docs/PERFORMANCE.md): up to 13 digits the result is a small string, so an
/// accepted hint allocates no id.
enum HintID {
    static func text(_ number: Int) -> String {
        // A negative number never comes from the broker's counter; the general spelling keeps it correct anyway.
        guard number >= 0 else { return "h-\(number)" }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            buffer[0] = UInt8(ascii: "h")
            buffer[1] = UInt8(ascii: "-")
            var digits = 1
            var high = number
            while high >= 10 {
                digits += 1
                high /= 10
            }
            var rest = number
            var index = 2 + digits
            while index > 2 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<(2 + digits)]), as: UTF8.self)
        }
    }
}
