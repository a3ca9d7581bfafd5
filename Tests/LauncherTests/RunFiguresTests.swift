import Testing
@testable import Launcher

/// The figures of a run read the same every time the folder is read.
struct RunFiguresTests {
    /// A platform's reported guarantee is the one most of its devices report. On a tie it is the first device's:
    /// a Dictionary's order (what it was) is the same for both lists in one process, so one of them would fail.
    @Test func theMostCommonGuaranteeOnATieIsTheFirstDevicesNotADictionarysOrder() {
        let a = "periodic(min 15m00s, typical 15m09s)"
        let b = "periodic(min 15m00s, typical 15m15s)"
        #expect(RunFigures.mostCommon([a, b]) == a)
        #expect(RunFigures.mostCommon([b, a]) == b)
        #expect(RunFigures.mostCommon([a, b, b]) == b)
        #expect(RunFigures.mostCommon([]) == nil)
    }
}
