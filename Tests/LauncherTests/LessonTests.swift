import Foundation
import LabTestSupport
import SyncProtocol
import Testing
@testable import Launcher

/// Real runs of every lesson (topologies/lessons/, docs/LESSONS.md): each runs the lab's design beside a broken one,
/// and the broken half must fail exactly the checks its `expect` names while the correct half passes. The lesson runs
/// here without its `expect` line, so the verdict is the bare checks' (invariants and product checks): status 1, the
/// failed checks are exactly the expected ones, and every violation belongs to a device or account the lesson expects
/// to break with that check, never to the correct half. The same run folder, judged again with the lesson's own
/// topology (its `expect` back), must then meet the expectation (`synclab check` exits 0).
@Suite(.serialized) struct LessonTests {
    static var lessons: URL { EndToEndTests.topologies.appendingPathComponent("lessons") }

    /// Every lesson file, so a new lesson is tested without touching this file.
    static let all: [String] = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../topologies/lessons")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json5") }.map { String($0.dropLast(".json5".count)) }.sorted()
    }()

    /// The lesson's `expect` block (device or account → check names) and, for each of its keys, the names a
    /// violation may carry: the device itself, or the account and its devices.
    static func expectation(of lesson: String) throws -> (expect: [String: [String]], names: [String: [String]]) {
        let text = try String(contentsOf: lessons.appendingPathComponent("\(lesson).json5"), encoding: .utf8)
        let root = try JSON5Parser.parse(text)
        func strings(_ node: JSON5Node?) -> [String] {
            guard case .array(let items)? = node?.value else { return [] }
            return items.compactMap { if case .string(let s) = $0.value { return s } else { return nil } }
        }
        func string(_ node: JSON5Node?)
            -> String? { if case .string(let s)? = node?.value { return s } else { return nil } }
        var devicesOf: [String: [String]] = [:]
        if case .array(let accounts)? = root["accounts"]?.value {
            for account in accounts {
                guard let id = string(account["id"]),
                    case .array(let devices)? = account["devices"]?.value else { continue }
                devicesOf[id] = devices.compactMap { string($0["id"]) }
            }
        }
        guard case .object(let pairs)? = root["expect"]?.value else { return ([:], [:]) }
        var expect: [String: [String]] = [:]
        var names: [String: [String]] = [:]
        for (key, node) in pairs {
            expect[key] = strings(node)
            names[key] = [key] + (devicesOf[key] ?? [])
        }
        return (expect, names)
    }

    /// Runs the lesson with its `expect` line removed, into a fresh folder.
    static func runBare(_ lesson: String) throws -> (run: EndToEndTests.Run, original: String, bare: String) {
        let text = try String(contentsOf: lessons.appendingPathComponent("\(lesson).json5"), encoding: .utf8)
        let bare = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("  expect:") }.joined(separator: "\n")
        let home = TempFolder()
        let path = home.file("\(lesson).json5")
        try bare.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try EndToEndTests.run(file: path, in: home)
        return (run, text, bare)
    }

    @Test func everyLessonIsTested() {
        #expect(Self.all.count >= 18, "\(Self.all)")
        #expect(Self.all.contains("unique-work"))
    }

    @Test(arguments: LessonTests.all)
    func theBrokenHalfFailsExactlyWhatItsLessonExpects(_ lesson: String) throws {
        let (expected, names) = try Self.expectation(of: lesson)
        #expect(!expected.isEmpty && !expected.values.contains { $0.isEmpty }, "\(lesson) expects nothing to break")
        let (run, original, bare) = try Self.runBare(lesson)
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(bare != original, "\(lesson): no `  expect:` line was removed")
        #expect(run.status == 1, "\(lesson): \(run.output)")

        // Invariants and product checks alike.
        let results = (run.report["invariants"]?.arrayValue ?? []) + (run.report["checks"]?.arrayValue ?? [])
        let failed = results.filter { $0["held"]?.boolValue != true }
        let failedNames = Set(failed.compactMap { $0["name"]?.stringValue })
        #expect(failedNames == Set(expected.values.flatMap { $0 }), "\(lesson): failed \(failedNames.sorted())")

        var seen: Set<String> = []  // "KEY/check" pairs with a violation
        for item in failed {
            let check = item["name"]?.stringValue ?? "?"
            let detail = item["detail"]?.stringValue ?? ""
            #expect(names.values.joined().contains { detail.contains($0) },
                    "\(lesson): \(check) fails and its detail names no broken half: \(detail)")
            // Each violation belongs to a subject expected to fail this very check.
            let keys = expected.filter { $0.value.contains(check) }.map(\.key)
            for violation in item["violations"]?.arrayValue ?? [] {
                let subjects = [violation["device"]?.stringValue, violation["account"]?.stringValue].compactMap { $0 }
                let covering = keys.filter { key in key == "*" || subjects.contains { names[key]!.contains($0) } }
                let text = violation["text"]?.stringValue ?? ""
                #expect(!covering.isEmpty,
                    "\(lesson): \(check) fails on \(subjects), which it expects to hold: \(text)")
                for key in covering { seen.insert("\(key)/\(check)") }
            }
        }
        for (key, checks) in expected {
            for check in checks {
                #expect(seen.contains("\(key)/\(check)"), "\(lesson): \(check) held for \(key)")
            }
        }

        // The same run, judged with the lesson's own `expect`, meets it.
        try original.write(toFile: "\(run.folder)/topology.json5", atomically: true, encoding: .utf8)
        let (status, output) = try EndToEndTests.synclab(["check", run.folder], limit: 60)
        #expect(status == 0, "\(lesson): with its expect, the run does not meet it:\n\(output)")
    }
}
