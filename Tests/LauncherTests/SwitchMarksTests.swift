import Foundation
import LabTestSupport
import SyncDevice
import SyncProtocol
import Testing
@testable import Launcher

/// Every lesson's report, from a simulated run (`synclab sim`: the same report as a real run, in a second or two):
/// the events its broken half's switch emits are drawn as flags on that half's lanes and counted for it in report.json
/// and report.md, never on the correct half; a failed check (product checks included) is named in the headline,
/// listed above the timeline and its device's lane ringed.
@Suite(.serialized) struct SwitchMarksTests {
    struct Rendered {
        let folder: String
        let json: JSONValue
        let markdown: String
        let html: String
        let topology: Topology
        let home: TempFolder
    }

    /// Simulates the lesson with its own `expect` into a fresh folder.
    static func render(_ lesson: String) throws -> Rendered {
        let home = TempFolder()
        let path = LessonTests.lessons.appendingPathComponent("\(lesson).json5").path
        let out = home.file("run")
        let (_, output) = try EndToEndTests.synclab(["sim", path, "--out", out], limit: 120)
        let text = try String(contentsOfFile: "\(out)/report.json", encoding: .utf8)
        #expect(!text.isEmpty, "\(lesson): \(output)")
        return Rendered(folder: out, json: try JSONValue.parse(text),
                        markdown: try String(contentsOfFile: "\(out)/report.md", encoding: .utf8),
                        html: try String(contentsOfFile: "\(out)/report.html", encoding: .utf8),
                        topology: try Topology.load(path: path), home: home)
    }

    /// The devices of the lesson's broken half: those its `expect` names, directly or by their account.
    static func brokenDevices(_ lesson: String, _ topology: Topology) throws -> Set<String> {
        let (_, names) = try LessonTests.expectation(of: lesson)
        let named = Set(names.values.joined())
        return Set(topology.accounts.flatMap(\.devices).map(\.id).filter { named.contains($0) })
    }

    /// The flags drawn on a device's lane, by the kind written in their `data-keys`.
    static func flags(on device: String, in html: String) -> [String] {
        html.components(separatedBy: "<g class=\"mark mark-switchEvent").dropFirst().compactMap { chunk in
            guard chunk.contains("data-lane=\"\(device)\"") else { return nil }
            guard let keys = chunk.components(separatedBy: "data-keys=\"").dropFirst().first?
                .components(separatedBy: "\"").first else { return nil }
            return String(keys.dropFirst(device.count + 1))
        }
    }

    @Test(arguments: LessonTests.all)
    func theBrokenHalfsSwitchEventsAreDrawnAndCountedOnItOnly(_ lesson: String) throws {
        let r = try Self.render(lesson)
        let broken = try Self.brokenDevices(lesson, r.topology)
        let devices = r.topology.accounts.flatMap(\.devices)
        #expect(!broken.isEmpty && broken.count < devices.count, "\(lesson): \(broken)")
        let counts = r.json["switchEvents"]?.objectValue ?? []
        func count(_ device: String) -> [(String, Int)] {
            (counts.first { $0.0 == device }?.1.objectValue ?? []).map { ($0.0, $0.1.intValue ?? 0) }
        }
        var brokenKinds = Set<String>()
        var correctKinds = Set<String>()
        for spec in devices {
            let own = Dictionary(spec.settings.differences(from: DeviceSettings()), uniquingKeysWith: { a, _ in a })
            let counted = count(spec.id)
            for (kind, n) in counted {
                #expect(n > 0)
                let cause = SwitchEvents.cause(of: kind)
                #expect(cause != nil, "\(lesson): \(kind) is not in the catalogue")
                // A switch's event only where that switch is set so.
                if case .device(let key, let value)? = cause {
                    #expect(own[key] != nil && (value == nil || own[key] == value),
                            "\(lesson): \(kind) on \(spec.id), whose \(key) is \(own[key] ?? "the lab's")")
                }
                if case .role? = cause { #expect(broken.contains(spec.id), "\(lesson): \(kind) on \(spec.id)") }
                // A platform's limit (a window that ran out, passes dropped with the app) hits both halves alike;
                // what tells them apart is what a switch did, or, in reinstall-before-sync, the ops a reinstall lost.
                // A device switch both halves set alike (fcm-overflow's pullOn) is the lesson's ground, not its cause.
                var shared = false
                if case .device(let key, _)? = cause {
                    shared = devices.filter { !broken.contains($0.id) }.contains { other in
                        other.settings.differences(from: DeviceSettings()).contains { $0 == (key, own[key] ?? "") }
                    }
                }
                let telling = cause.map { if case .platform = $0 { return false } else { return true } } ?? false
                    && !shared || kind == "app.reinstalled (ops lost)"
                if telling && broken.contains(spec.id) { brokenKinds.insert(kind) }
                if telling && !broken.contains(spec.id) { correctKinds.insert(kind) }
                // Counted and drawn alike: one flag per event on the device's lane, the kind in its words.
                let drawn = Self.flags(on: spec.id, in: r.html).filter { $0 == kind }.count
                #expect(drawn == n, "\(lesson): \(n) \(kind) counted on \(spec.id), \(drawn) drawn")
                #expect(r.markdown.contains("| \(spec.id) | `\(kind)` | \(n) |"), "\(lesson): \(kind) row")
            }
        }
        #expect(!brokenKinds.isEmpty, "\(lesson): no switch event on the broken half \(broken.sorted())")
        #expect(brokenKinds.isDisjoint(with: correctKinds),
                "\(lesson): the correct half shows \(brokenKinds.intersection(correctKinds).sorted()) too")
        #expect(r.html.contains("class=\"legend\"") && r.html.contains("what a design switch or a platform limit did"))
    }

    /// Lessons whose broken half fails a product check, and the device that fails it.
    static let productChecks: [(lesson: String, device: String, check: String, correct: String)] = [
        ("unique-work", "queue", "wasted-passes", "keep"),
        ("ios-expiration-handler", "killed", "data-age-at-open", "handled"),
        ("web-beacon", "task", "unsynced-at-24h", "beacon"),
        ("set-task-completed", "never", "data-age-at-open", "completes"),
        ("silent-push-outbound", "push-only", "unsynced-at-24h", "refresh"),
        ("large-first-pass", "at-end", "data-age-at-open", "per-page"),
        ("fcm-demotion", "all-high", "data-age-at-open", "visible"),
        ("standby-buckets", "rare", "data-age-at-open", "working-set"),
    ]

    @Test(arguments: 0..<SwitchMarksTests.productChecks.count)
    func aFailedProductCheckIsInTheHeadlineListedAndItsLaneRinged(_ index: Int) throws {
        let (lesson, device, check, correct) = Self.productChecks[index]
        let r = try Self.render(lesson)
        let headline = r.markdown.split(separator: "\n").dropFirst(1).first.map(String.init) ?? ""
        #expect(headline.hasPrefix("**Expectation met**"), "\(lesson): \(headline)")
        #expect(headline.contains("**\(check)** on \(device)"), "\(lesson): \(headline)")
        #expect(headline.contains("Every check held on") && headline.contains(correct), "\(lesson): \(headline)")
        #expect(r.html.contains("<li class=\"failed-check\" data-check=\"\(check)\">"), "\(lesson): not listed")
        func ringed(_ lane: String) -> Bool {
            r.html.contains("<g class=\"lane\" data-lane=\"\(lane)\"><rect") && r.html.components(
                separatedBy: "<g class=\"lane\" data-lane=\"\(lane)\">").dropFirst().first?
                .prefix(while: { $0 != ">" }).contains("lane-ring") == true
        }
        #expect(ringed(device), "\(lesson): \(device)'s lane is not ringed")
        // The halves' plots drawn apart: the broken device's group and the correct one's, each named.
        let halves = r.html.components(separatedBy: "<h4 class=\"half\"").dropFirst()
            .map { $0.prefix(while: { $0 != "<" }) }
        #expect(halves.count >= 2, "\(lesson): \(halves)")
        #expect(halves.contains { $0.contains(": \(device)") || $0.contains(", \(device)") })
        #expect(halves.contains { $0.contains(correct) })
        #expect(!halves.contains { $0.contains(device) && $0.contains(correct) }, "\(lesson): one group holds both")
        #expect(!ringed(correct), "\(lesson): the correct half's lane \(correct) is ringed")
    }
}
