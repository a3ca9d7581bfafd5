@testable import PushBroker
import Testing

/// The hint id is part of every hint event and every hint on the wire: the stack-built spelling must be the one
/// interpolation gave (old run folders and the simulation's byte-identical replay read it).
@Suite struct HintIDTests {
    @Test("h-<n> is spelled as interpolation spells it, at every length, at the powers of ten and their neighbours")
    func matchesInterpolation() {
        var numbers = [0, 1, 9, 10, 11, 99, 100, 12_345, Int.max, -1, -10, Int.min]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            numbers += [power - 1, power, power + 1]
        }
        for number in numbers {
            #expect(HintID.text(number) == "h-\(number)", "number \(number)")
        }
        for number in stride(from: 0, to: 200_000, by: 7) {
            #expect(HintID.text(number) == "h-\(number)")
        }
    }
}
