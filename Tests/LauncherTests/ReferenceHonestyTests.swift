import Foundation
import Markup
import Testing
@testable import Launcher

/// A reference figure is the article's number with its source, inside a band around it; one the lab cannot reproduce
/// says so and why, and is not judged; a band that cannot fail is a topology error.
@Suite struct ReferenceHonestyTests {
    /// Every shipped topology file, in every folder under topologies/.
    static let shipped: [String] = {
        let root = EndToEndTests.topologies.path
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".json5") }.sorted().map { "\(root)/\($0)" }
    }()

    @Test func everyShippedReferenceIsThePublishedValueWithItsSeedInsideItsBand() throws {
        var figures = 0
        for path in Self.shipped {
            let topology = try Topology.load(path: path)
            for figure in topology.reference {
                figures += 1
                #expect(figure.band.contains(figure.published), "\(path): \(figure.name)")
                #expect(figure.source.range(of: #"seed \d{3}"#, options: .regularExpression) != nil,
                        "\(path): \(figure.name)'s source \"\(figure.source)\" names no seed")
                #expect(figure.reproduced || !(figure.reason ?? "").isEmpty, "\(path): \(figure.name)")
                // A design the seed says fails and one it says works: neither band holds the other's value.
                for other in topology.reference where other.fails != figure.fails && other.reproduced
                    && figure.reproduced
                    && (ReferenceFigures.variantFigure(other.name)?.figure ?? other.name)
                        == (ReferenceFigures.variantFigure(figure.name)?.figure ?? figure.name)
                {
                    #expect(!figure.band.contains(other.published), "\(path): \(figure.name) holds \(other.name)")
                }
            }
        }
        #expect(figures >= 30, "only \(figures) reference figures in \(Self.shipped.count) files")
    }

    /// The web-triggers experiment: the article's 340 and 891 are its own (per install), not the lab's passes.
    @Test func seed000WebTriggersPrintsTheArticlesCountsAsNotReproduced() throws {
        let path = Self.shipped.first { $0.hasSuffix("seed000-web-triggers.json5") }!
        let reference = try Topology.load(path: path).reference
        let online = try #require(reference.first { $0.name == "variants.online.allPassesPerInstall" })
        #expect(online.published == 0.85 && !online.reproduced && online.quote?.contains("340") == true)
        let visibility = try #require(reference.first { $0.name == "variants.visibility.allPassesPerInstall" })
        #expect(abs(visibility.published - 891.0 / 400) < 0.01 && !visibility.reproduced)
        #expect(!reference.contains { $0.published == 9.1 }, "the lab's own 9.1 % printed as published")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("37 hours"))
        let seed004 = try Topology.load(path: Self.shipped.first { $0.hasSuffix("seeds/seed004-drafts.json5") }!)
        let allReadings = seed004.reference.allSatisfy { $0.reading }
        #expect(allReadings)
    }

    func refusal(_ reference: String, scenario: String = "") -> TopologyError? {
        let text = """
            { name: "r", accounts: [{ id: "acme", devices: [{ id: "old", platform: "ios" },
                                                            { id: "new", platform: "ios" }] }],
              scenario: [\(scenario)],
              reference: {
                \(reference)
              } }
            """
        return topologyRefusal(text, file: "r.json5")
    }

    @Test func aBandAroundTheLabsValueOrOneThatCannotFailIsRefusedNamingFileAndKey() throws {
        let outside = try #require(refusal(
            #""variants.old.syncsPerInstall": { seed: 340, band: [13, 17], source: "seed 000" }"#))
        #expect(outside.file == "r.json5" && outside.key == "reference.variants.old.syncsPerInstall.band")
        #expect(outside.message.contains("does not contain the published 340"))
        let anonymous = try #require(refusal(
            #""variants.old.syncsPerInstall": { seed: 3, band: [2, 4], source: "the lab's script" }"#))
        #expect(anonymous.message.contains("names no seed"))
        let silent = try #require(refusal(
            #""variants.old.syncsPerInstall": { seed: 3, band: [2, 4], source: "seed 000", reproduced: false }"#))
        #expect(silent.message.contains("\"reason\""))
        // The band of the design that works holds the failing design's published value: it cannot tell them apart.
        let blind = try #require(refusal("""
            "variants.old.receivedPercent": { seed: 0, band: [0, 25], source: "seed 004", fails: true },
            "variants.new.receivedPercent": { seed: 100, band: [0, 100], source: "seed 004" },
            """))
        #expect(blind.key == "reference.variants.new.receivedPercent" && blind.message.contains("cannot tell"))
        // Unsynced at 24 h with 0 in the band, for users who never go offline or close the app: it cannot fail.
        let zero = #""platforms.ios.unsyncedAt24hPercent": { seed: 1.1, band: [0, 5], source: "seed 000" }"#
        let never = try #require(refusal(zero))
        #expect(never.key == "reference.platforms.ios.unsyncedAt24hPercent" && never.message.contains("cannot fail"))
        // The same band is accepted once a user can leave an edit unsynced, and the honest versions are.
        #expect(refusal(zero, scenario: #"{ at: "1m", action: "offline", device: "old" }"#) == nil)
        #expect(refusal("""
            "variants.old.receivedPercent": { seed: 0, band: [0, 25], source: "seed 004", fails: true },
            "variants.new.receivedPercent": { seed: 100, band: [90, 100], source: "seed 004" },
            "platforms.ios.unsyncedAt24hPercent": { seed: 1.1, band: [0.5, 2], source: "seed 000",
                                                   reproduced: false, reason: "nobody goes offline here" },
            """) == nil)
    }

    @Test func aFigureNotReproducedIsPrintedWithItsReasonAndNotJudged() throws {
        var figure = ReferenceFigure(name: "platforms.ios.syncsPerInstall", published: 19, band: 12...28,
                                     source: "seed 000")
        figure.reproduced = false
        figure.reason = "the lab's users are not the article's"
        let rows = [ReferenceFigures.Row(figure: figure, measured: 100)]
        #expect(!rows[0].within && rows[0].verdict == "not reproduced: the lab's users are not the article's")
        let check = try #require(ReferenceFigures.check(rows))
        #expect(check.held && check.detail.contains("1 not reproduced"))
        #expect(Document(ReferenceFigures.blocks(rows)).markdown.contains("| 12–28 | not reproduced: the lab's users"))
        // Judged, the same measurement fails.
        figure.reproduced = true
        #expect(ReferenceFigures.check([ReferenceFigures.Row(figure: figure, measured: 100)])?.held == false)
    }
}

/// Seed 000's before and after experiments play the same users: the same seed and the same named draws
/// (`users: "seed000-week"`) give every device the same sessions and edits, whatever its settings.
@Suite struct BeforeAfterUsersTests {
    static func steps(_ topology: Topology) -> [String] {
        topology.timeline().map { step in
            let target: String
            switch step.action {
            case .device(let device, _), .edit(let device, _, _, _, _): target = device
            default: target = "-"
            }
            return "\(step.at) \(step.action.name) \(target)"
        }
    }

    @Test func beforeAndAfterPlayTheSameUsersAndWithoutTheNameTheyWouldNot() throws {
        let folder = EndToEndTests.topologies.appendingPathComponent("seeds").path
        let before = try Topology.load(path: "\(folder)/seed000-before.json5")
        let after = try Topology.load(path: "\(folder)/seed000-after.json5")
        #expect(before.seed == after.seed)
        #expect(before.behaviours.map(\.users) == ["seed000-week"] && after.behaviours.map(\.users) == ["seed000-week"])
        let a = Self.steps(before)
        #expect(a.count > 30, "\(a.count) steps")
        #expect(a == Self.steps(after))
        // The comparison can fail: draws named by the behaviour's line (before this key) differ between the files.
        var unnamed = after
        unnamed.behaviours[0].users = nil
        unnamed.behaviours[0].line += 1
        #expect(Self.steps(unnamed) != a)
    }
}
