import Foundation
import Testing
@testable import Launcher

/// The topology's `reference` figures: read with errors that name file, line and key, measured from a run folder,
/// printed beside the published value, and a figure outside its band fails the run as check `reference-figures`.
@Suite struct ReferenceFiguresTests {
    /// Android device "a" gets three scheduler-granted syncs 100 s apart; iOS device "b" gets none.
    func fixture(reference: String, expect: String = "") throws -> RunFixture {
        var fixture = try RunFixture()
        for (n, t) in [100, 200, 300].enumerated() {
            fixture.events += fixture.emptyPass(t, "a", pass: n + 2, trigger: "periodic", end: t + 1, outcome: nil)
        }
        fixture.topologyExtra = "reference: { \(reference) }, \(expect)"
        return fixture
    }

    static let both = """
        "platforms.android.syncsPerInstall": { seed: 3, band: [2, 4], source: "seed 000: hand-made, inside" },
        "platforms.ios.syncsPerInstall": { seed: 19, band: [12, 28], source: "seed 000, 7 days" },
        """

    @Test func aFigureOutsideItsBandFailsTheRunAndOneInsideHolds() throws {
        let fixture = try fixture(reference: Self.both)
        let report = try fixture.report()
        let result = try #require(report.checks.first { $0.name == "reference-figures" })
        #expect(!result.held)
        #expect(result.violations.count == 1)
        #expect(result.violations.first?.text.contains("platforms.ios.syncsPerInstall: measured 0") == true)
        #expect(result.violations.first?.text.contains("12–28") == true)
        #expect(!report.passed)
        #expect(report.references.map(\.within) == [true, false])
        #expect(report.references.first?.measured == 3)
        #expect(report.references.first?.ratio == 1)
        let md = report.markdown
        #expect(md.contains("| `platforms.android.syncsPerInstall` | 3 | 3 | 1.00 | 2–4 | yes |"))
        #expect(md.contains("| `platforms.ios.syncsPerInstall` | 19 | 0 | 0.00 | 12–28 | **no** |"))
        let json = report.json.description
        #expect(json.contains("\"reference\""))
        #expect(json.contains("\"within\":false") || json.contains("\"within\": false"))
        // The platform table's per-install figures for the same run.
        let android = try #require(report.figures.platforms.first { $0.platform == "android" })
        #expect(android.syncsPerInstall == [3])
        #expect(android.medianGapMinutes.map { abs($0 - 100.0 / 60) < 0.001 } == true)
        #expect(android.expectedPerInstall == round3(600.0 / 900))
        #expect(android.backgroundByHour[0] == 3)
        #expect(android.nightSharePercent == 0)
    }

    @Test func anExpectationCanNameTheReferenceCheck() throws {
        let fixture = try fixture(reference: Self.both, expect: "expect: { \"*\": [\"reference-figures\"] },")
        let report = try fixture.report()
        #expect(report.expectation?.met == true)
        #expect(report.passed)
    }

    @Test func everyFigureInsideItsBandHolds() throws {
        let fixture = try fixture(reference: """
            "platforms.android.syncsPerInstall": { seed: 3, band: [2, 4], source: "seed 000" },
            "platforms.ios.syncsPerInstall": { seed: 0, band: [0, 1], source: "seed 000" },
            """)
        let report = try fixture.report()
        #expect(report.checks.first { $0.name == "reference-figures" }?.held == true)
        #expect(report.passed)
    }

    func parseError(_ reference: String) -> TopologyError? {
        let text = """
            { name: "r", accounts: [{ id: "acme", devices: [{ id: "a", platform: "ios" }] }],
              reference: {
                \(reference)
              } }
            """
        return topologyRefusal(text, file: "r.json5")
    }

    @Test func unknownFiguresAndBadBandsAreRefusedNamingFileLineAndKey() throws {
        let unknown = try #require(parseError(#""platforms.ios.syncsPerDay": { seed: 19, band: [12, 28] }"#))
        #expect(unknown.file == "r.json5" && unknown.line == 3)
        #expect(unknown.key == "reference.platforms.ios.syncsPerDay")
        #expect(unknown.message.contains("known figures: platforms.android.syncsPerInstall"))
        let band = try #require(parseError(#""platforms.ios.syncsPerInstall": { seed: 19, band: [28, 12] }"#))
        #expect(band.key == "reference.platforms.ios.syncsPerInstall.band")
        let missing = try #require(parseError(#""platforms.ios.syncsPerInstall": { band: [1, 2] }"#))
        #expect(missing.message.contains("\"seed\""))
        let stray = try #require(parseError(#""platforms.ios.syncsPerInstall": { seed: 1, band: [1, 2], bnd: 3 }"#))
        #expect(stray.key == "reference.platforms.ios.syncsPerInstall.bnd")
        let ok = try Topology.parse("""
            { name: "r", accounts: [{ id: "acme", devices: [{ id: "a", platform: "ios" }] }],
              reference: { "platforms.ios.nightShare": { seed: 100, band: [80, 100], source: "seed 000" } } }
            """, file: "r.json5", defaultName: "r")
        #expect(ok.reference == [ReferenceFigure(name: "platforms.ios.nightShare", published: 100, band: 80...100,
                                                 source: "seed 000")])
    }

    @Test func aVariantFigureIsMeasuredOverItsDevicesAndAnUnknownVariantIsRefused() throws {
        let fixture = try fixture(reference: """
            "variants.a.syncsPerInstall": { seed: 3, band: [3, 3], source: "seed 000" },
            "variants.b.receivedPercent": { seed: 100, band: [100, 100], source: "seed 000" },
            "variants.a.receivedPercent": { seed: 100, band: [100, 100], source: "seed 000" },
            """)
        let report = try fixture.report()
        // "a" got three scheduled syncs; "b" received "a"'s edit; "a" received nothing (no edit came from "b").
        #expect(report.references.map(\.measured) == [3, 100, nil])
        let result = try #require(report.checks.first { $0.name == "reference-figures" })
        #expect(result.violations.map(\.text).first?.contains("variants.a.receivedPercent: measured nothing") == true)
        let unknown = try #require(parseError(#""variants.zz.syncsPerInstall": { seed: 1, band: [0, 2] }"#))
        #expect(unknown.key == "reference.variants.zz.syncsPerInstall")
        #expect(unknown.message.contains("no device of this topology is \"zz\""))
    }
}
